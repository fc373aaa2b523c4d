#!/usr/bin/env bash
# Install and start what prchain needs outside Python: git, Docker's engine, debootstrap (to build
# base images without a registry), PostgreSQL (the test suite runs against it too), Chromium
# (tests open the HTML report in it, headless) and Debian's docker-registry (era images travel
# between nodes through a registry; the tests start their own instance of it on a free port).
# Idempotent: a second run only checks that the services are up.
set -euo pipefail

need=()
command -v git >/dev/null || need+=(git)
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v pg_ctlcluster >/dev/null || need+=(postgresql)
command -v chromium >/dev/null || need+=(chromium)  # the report's browser tests drive it headless
command -v docker-registry >/dev/null || need+=(docker-registry)  # not started here: no service
if ((${#need[@]})); then
  echo "setup: installing ${need[*]} from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# PostgreSQL: start the cluster and make a login role for the tests.
if ! pg_lsclusters -h 2>/dev/null | grep -q online; then
  cluster=$(pg_lsclusters -h | awk 'NR==1 {print $1" "$2}')
  # shellcheck disable=SC2086
  pg_ctlcluster $cluster start
fi
su postgres -c "psql -tAc \"SELECT 1 FROM pg_roles WHERE rolname='prchain'\"" | grep -q 1 ||
  su postgres -c "psql -qc \"CREATE ROLE prchain LOGIN SUPERUSER PASSWORD 'prchain'\""
su postgres -c "psql -tAc \"SELECT 1 FROM pg_database WHERE datname='prchain'\"" | grep -q 1 ||
  su postgres -c "createdb -O prchain prchain"

# Docker: start the daemon in the background when nothing answers.
if ! docker info >/dev/null 2>&1; then
  echo "setup: starting dockerd"
  (dockerd >/var/log/dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "setup: dockerd did not start; see /var/log/dockerd.log" >&2; exit 1; }
fi
echo "setup: git, docker and postgresql are ready"
