#!/bin/sh
# How the outputs in this directory were made, with the real tools (go >= 1.24 and its go1.20.14
# toolchain from the module proxy, cargo, mvn with Maven Central, pnpm 8.15.9 from the npm
# registry, pytest, gcc, pkg-config). Paths of the scratch projects were then made /work/repo.
#   go-1.26-build-failed.out: module example.com/m (go 1.20), package a whose test uses a testify
#     mock (its met expectation logs `PASS:\tGreet(string)`), package broken whose test calls an
#     undefined Three; `go test -json ./... >out 2>&1`.
#   go-1.20-build-failed.out: the same with GOTOOLCHAIN=go1.20.14 (the compiler's words on stderr);
#   go-1.20-build-failed-stderr-last.out: its stdout, then its stderr.
#   cargo-test-not-compiled.out: a workspace of crates good and bad, bad's integration test calls
#     an undefined four(); `cargo test --workspace --no-fail-fast 2>&1`.
#   maven-test-compile.out: one module whose test calls Calc.three(); `mvn -B -fae test 2>&1`,
#     download lines dropped.
#   maven-parent-pom.out: a pom whose parent is jackson-base 2.15.0-SNAPSHOT from Sonatype's
#     snapshot repository (unreachable; FasterXML/jackson-core's eras name it); `mvn -B -fae test 2>&1`.
#   maven-tests-skipped.out: a reactor of modules kept and skipping, whose POM configures surefire
#     with <skipTests>true</skipTests> (as nacos's naming module did until 2021), its HalfTest
#     selected: `mvn -B -fae test -Dmaven.test.failure.ignore=true -DfailIfNoTests=false
#     -Dsurefire.failIfNoSpecifiedTests=false -Dtest=HalfTest 2>&1`, download lines dropped.
#   pnpm-fetch-403.out: `pnpm install` of yaml 2.3.1 from a local registry whose tarballs answer 403.
#   pytest-collection-refused.out: tests/test_db.py connects at import to a port nothing listens
#     on; `pytest -rA --continue-on-collection-errors tests`.
#   native-header.out: `gcc -c` of a file including <selinux/selinux.h>; native-pkg-config.out:
#     `pkg-config --cflags alsa`; native-ld.out: `gcc m.c -lselinuxnothere`.
set -e
root=/tmp/prchain-root-errors; rm -rf $root; mkdir -p $root/m/a $root/m/broken; cd $root/m
printf 'module example.com/m\n\ngo 1.20\n' > go.mod
printf 'package a\n\ntype Greeter interface{ Greet(n string) string }\n\nfunc Hello(g Greeter) string { return g.Greet("ada") }\n' > a/a.go
cat > a/a_test.go <<'GO'
package a

import (
	"testing"

	"github.com/stretchr/testify/mock"
)

type fake struct{ mock.Mock }

func (f *fake) Greet(n string) string { return f.Called(n).String(0) }

func TestHello(t *testing.T) {
	f := &fake{}
	f.On("Greet", "ada").Return("hi ada")
	if Hello(f) != "hi ada" {
		t.Fatal("no")
	}
	f.AssertExpectations(t)
}
GO
printf 'package broken\n\nfunc Two() int { return 2 }\n' > broken/b.go
printf 'package broken\n\nimport "testing"\n\nfunc TestThree(t *testing.T) {\n\tif Three() != 3 {\n\t\tt.Fatal("no")\n\t}\n}\n' > broken/b_test.go
go get github.com/stretchr/testify@v1.8.4 && go mod tidy
go test -json ./... > $root/go-1.26-build-failed.out 2>&1 || true
GOTOOLCHAIN=go1.20.14 go test -json ./... > $root/go-1.20-build-failed.out 2>&1 || true
GOTOOLCHAIN=go1.20.14 go test -json ./... > $root/stdout 2> $root/stderr || true
cat $root/stdout $root/stderr > $root/go-1.20-build-failed-stderr-last.out
# native-node-gyp-make.out: `npm ci` of node-pcap/node_pcap a933e48 in a node 12.22.12 (npm 6.14.18)
# toolchain layer without make; cargo-alsa-no-sound-card.out: diwic/alsa-rs 2022 era's `cargo test`
echo "outputs in $root; the cargo, maven, pnpm, pytest and native ones as the comments above say"
