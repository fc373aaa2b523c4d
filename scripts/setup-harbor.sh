#!/usr/bin/env bash
# Harbor (the agent-evaluation harness `prchain tasks convert --to harbor` writes tasks for) in
# its own environment, .harbor/: it needs Python >= 3.12 and Docker Compose v2. The interpreter is
# the first of python3.13, python3.12 (PATH) and pyenv's 3.12+; Compose is Debian trixie's
# docker-compose package (bookworm has only the Python 1.x), its plugin unpacked where the Docker
# CLI finds plugins. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
HARBOR_VERSION=${HARBOR_VERSION:-0.26.0}
PLUGINS=/usr/local/lib/docker/cli-plugins

if ! docker compose version >/dev/null 2>&1; then
  echo "setup-harbor: Docker Compose v2 from Debian trixie"
  apt_dir=$(mktemp -d)
  mkdir -p "$apt_dir"/lists/partial "$apt_dir"/cache/archives/partial
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    > "$apt_dir/sources.list"
  apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
            -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
  apt-get -qq "${apt_opts[@]}" update
  (cd "$apt_dir" && apt-get -qq "${apt_opts[@]}" download docker-compose 2>/dev/null)
  dpkg-deb -x "$apt_dir"/docker-compose_*.deb "$apt_dir/root"
  mkdir -p "$PLUGINS"
  install -m 0755 "$apt_dir/root/usr/libexec/docker/cli-plugins/docker-compose" "$PLUGINS/"
  rm -rf "$apt_dir"
  docker compose version
fi

installed() {
  .harbor/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('harbor') != '$HARBOR_VERSION')" 2>/dev/null
}
if [ ! -x .harbor/bin/harbor ] || ! installed; then
  python=""
  for candidate in python3.13 python3.12 "$(pyenv root 2>/dev/null || echo ~/.pyenv)"/versions/3.1[2-9]*/bin/python; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      python=$candidate; break
    fi
  done
  if [ -z "$python" ]; then
    echo "setup-harbor: no Python >= 3.12 here; install one (Debian trixie's python3.13, or pyenv) and run again" >&2
    exit 1
  fi
  echo "setup-harbor: harbor $HARBOR_VERSION on $("$python" --version)"
  rm -rf .harbor
  "$python" -m venv .harbor
  .harbor/bin/python -m pip install -q "harbor==$HARBOR_VERSION"
fi
installed || { echo "setup-harbor: harbor $HARBOR_VERSION did not install in .harbor/" >&2; exit 1; }
echo "setup-harbor: harbor $HARBOR_VERSION ready (.harbor/bin/harbor)"
