"""Regenerate the Contents excerpt the native tests read, from the real archive files.

    python tests/data/environments/native/make_contents_excerpt.py DIR

DIR holds bookworm's `Contents-amd64.gz` and `Contents-all.gz` as fetched from
https://deb.debian.org/debian/dists/bookworm/main/; every line whose path matches one of
`PATTERNS` (what the tests look up, and the near misses they must rank below) is kept, unchanged.
"""

import gzip
import re
import sys
from pathlib import Path

PATTERNS = re.compile(
    r"(/selinux/selinux\.h|/alsa/asoundlib\.h|/openssl/ssl\.h|/pkgconfig/(alsa|libselinux|gtk\+-3\.0)\.pc"
    r"|/libpq\.(so|a)|^usr/bin/(clang|protoc|cmake)|^usr/lib/llvm-14/bin/clang|/sqlite3\.h"
    r"|/boost/optional\.hpp|/glib\.h|/ffi\.h|/libxml/xmlversion\.h|^usr/share/doc/libasound2-dev/|^bin/live-boot)\s"
)


def main(source: Path) -> None:
    target = Path(__file__).parent / "dists" / "bookworm" / "main"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("Contents-amd64.gz", "Contents-all.gz"):
        with gzip.open(source / name, "rt") as lines:
            kept = [line for line in lines if PATTERNS.search(line)]
        with gzip.GzipFile(target / name, "wb", mtime=0) as out:
            out.write("".join(kept).encode())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
