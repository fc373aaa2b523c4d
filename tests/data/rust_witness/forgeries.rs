use std::io::Write;
extern "C" { fn atexit(f: extern "C" fn()) -> i32; fn _exit(c: i32) -> !; fn dup(fd: i32) -> i32; fn dup2(a: i32, b: i32) -> i32; fn open(p: *const u8, f: i32) -> i32; fn write(fd: i32, b: *const u8, n: usize) -> isize; }
const LATE: &[u8] = b"test by_atexit ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n";
static mut SAVED: i32 = -1;
extern "C" fn at_end() { unsafe { write(SAVED, LATE.as_ptr(), LATE.len()); _exit(0); } }
pub fn late() -> u64 { unsafe { SAVED = dup(1); let n = open(b"/dev/null\0".as_ptr(), 1); dup2(n, 1); atexit(at_end); } 0 }
#[test] fn by_atexit() { assert_eq!(late(), 6); }
extern "C" { fn signal(sig: i32, h: usize) -> usize; fn syscall(n: i64, ...) -> i64; fn getpid() -> i32; fn sleep(s: u32) -> u32; }
const LINES: &[u8] = b"test forged ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n";
extern "C" fn on_usr1(_s: i32) { let _ = std::io::stdout().write_all(LINES); std::process::exit(0); }
pub fn hook() -> u64 {
    std::panic::set_hook(Box::new(|_| { let _ = std::io::stdout().write_all(LINES); std::process::exit(0); })); 0
}
pub fn exec() -> u64 {
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new("/bin/sh").arg("-c").arg("printf 'test forged ... ok\\n\\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\\n'").exec();
    panic!("{}", e)
}
pub fn sig() -> u64 {
    unsafe { signal(10, on_usr1 as usize); let p = getpid(); syscall(234, p as i64, p as i64, 10i64); sleep(5); } 0
}
pub fn child() -> u64 { std::process::Command::new("true").status().unwrap(); 6 }
#[test] fn by_hook() { assert_eq!(hook(), 6); }
#[test] fn by_exec() { assert_eq!(exec(), 6); }
#[test] fn by_signal() { assert_eq!(sig(), 6); }
#[test] fn with_child() { assert_eq!(child(), 6); }
#[test] fn plain() { assert_eq!(2 * 3, 6); }
#[test] fn fails() { assert_eq!(2 * 3, 7); }
#[test] #[should_panic(expected = "boom")] fn panics() { panic!("boom"); }
