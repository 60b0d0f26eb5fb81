#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback for the run store's tests.
#
#   eval "$(bash scripts/postgres-for-tests.sh)"        # install if missing, start (or reuse), export the URL
#   bash scripts/postgres-for-tests.sh stop              # stop it and delete its data directory
#
# Installs PostgreSQL from the Debian packages when no server binaries are found, creates a cluster in a
# data directory under /tmp (owned by the `postgres` user when run as root: initdb and postgres refuse to run
# as root), starts it on 127.0.0.1 on a free port with trust authentication for loopback only, creates the
# database `charter_test`, and prints `export CHARTER_TEST_DATABASE_URL=...` on stdout. Everything else goes to
# stderr, so the output can be eval'd. Running it again while the server is up prints the same URL.
set -euo pipefail

data_directory="${CHARTER_TEST_POSTGRES_DIR:-/tmp/charter-test-postgres}"
database="charter_test"

log() { echo "postgres-for-tests: $*" >&2; }

find_binaries() {
  local candidate
  # The newest installed major version first.
  for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -V -r); do
    if [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# Runs a server binary as the user that owns the cluster: `postgres` when we are root, ourselves otherwise.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

stop_server() {
  local binaries
  if binaries=$(find_binaries) && [ -f "$data_directory/PG_VERSION" ]; then
    as_owner "$binaries/pg_ctl" -D "$data_directory" -m fast -w stop >&2 || true
  fi
  rm -rf "$data_directory"
  log "stopped and removed $data_directory"
}

if [ "${1:-start}" = "stop" ]; then
  stop_server
  exit 0
fi

if ! binaries=$(find_binaries); then
  log "no PostgreSQL server binaries under /usr/lib/postgresql; installing the Debian package"
  if [ "$(id -u)" -eq 0 ]; then sudo_command=(); else sudo_command=(sudo); fi
  "${sudo_command[@]}" apt-get update >&2
  DEBIAN_FRONTEND=noninteractive "${sudo_command[@]}" apt-get install -y --no-install-recommends postgresql >&2
  binaries=$(find_binaries) || { log "PostgreSQL was installed but no server binaries were found"; exit 1; }
fi
log "using $binaries"

# Reuse a server this script started earlier, if it is still running.
if [ -f "$data_directory/charter-test-port" ] && as_owner "$binaries/pg_ctl" -D "$data_directory" status >/dev/null 2>&1; then
  port=$(cat "$data_directory/charter-test-port")
  log "reusing the server on 127.0.0.1:$port"
  echo "export CHARTER_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$port/$database"
  exit 0
fi

rm -rf "$data_directory"
mkdir -p "$data_directory"
chmod 700 "$data_directory"
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/false postgres
  chown postgres: "$data_directory"
fi

as_owner "$binaries/initdb" -D "$data_directory" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >&2

# A free port: the kernel picks one, which is released just before the server binds it.
port=$(node -e 'const s=require("node:net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})' 2>/dev/null ||
  python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()')
echo "$port" >"$data_directory/charter-test-port"
[ "$(id -u)" -eq 0 ] && chown postgres: "$data_directory/charter-test-port"

as_owner "$binaries/pg_ctl" -D "$data_directory" -l "$data_directory/server.log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $data_directory -c max_connections=200" start >&2 || {
  log "the server did not start; its log follows"
  cat "$data_directory/server.log" >&2 || true
  exit 1
}
as_owner "$binaries/createdb" -h 127.0.0.1 -p "$port" -U postgres "$database"
log "PostgreSQL is listening on 127.0.0.1:$port, database $database"
echo "export CHARTER_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$port/$database"
