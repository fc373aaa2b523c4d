"""What a verification run's kept output holds: the tail, and before it whatever says a header,
pkg-config module, library or program is missing, so the native revision can read it."""

from __future__ import annotations

from prchain.environments.eras import native
from prchain.setup.ladder import LOG_CHARS, _kept


def test_a_missing_header_far_before_the_tail_is_kept_for_the_native_revision() -> None:
    """google/gopacket: `go test -json` printed 389 tests' events after the cgo package's
    "pcap.h: No such file or directory", and the kept tail no longer said what was missing."""
    asked = "pcap/pcap_unix.go:34:10: fatal error: pcap.h: No such file or directory"
    events = "".join(f'{{"Action":"pass","Test":"Test{n}"}}\n' for n in range(3000))
    kept = _kept(f"# github.com/google/gopacket/pcap\n{asked}\n{events}")
    assert kept.startswith(asked + "\n") and kept.endswith(events[-LOG_CHARS:])
    assert [m.name for m in native.missing(kept)] == ["pcap.h"]
    assert _kept(events) == events[-LOG_CHARS:]  # nothing missing: the tail alone
