#!/usr/bin/env bash
# Source this: sets WEFT_TEST_DATABASE_URL, WEFT_TEST_NATS_URL and WEFT_TEST_MYSQL_URL. When they are
# not given, uses PostgreSQL, nats-server and MariaDB on loopback, installing (apt) and starting them when missing.
set -u
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() { for _ in $(seq 1 60); do port_open "$1" && return 0; sleep 0.5; done; return 1; }
apt_install() {
  [ "$(id -u)" = 0 ] || { echo "weft: $* missing and not root; install it or set the WEFT_TEST_* URL" >&2; return 1; }
  [ -n "${WEFT_APT_UPDATED:-}" ] || { apt-get update -qq >&2; export WEFT_APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

if [ -z "${WEFT_TEST_DATABASE_URL:-}" ]; then
  if ! port_open 5432; then
    command -v pg_ctlcluster >/dev/null || apt_install postgresql
    ver=$(ls /etc/postgresql | sort -n | tail -1)
    pg_ctlcluster --skip-systemctl-redirect "$ver" main start >&2 || true
    wait_port 5432 || { echo "weft: PostgreSQL did not start" >&2; exit 1; }
  fi
  psql_admin() { psql -h 127.0.0.1 -U postgres -d postgres -tAc "$1" 2>/dev/null || su postgres -c "psql -d postgres -tAc \"$1\""; }
  if [ "$(psql_admin "SELECT 1 FROM pg_database WHERE datname='weft_test'")" != "1" ]; then
    psql_admin "CREATE DATABASE weft_test" >/dev/null
  fi
  export WEFT_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:5432/weft_test"
fi

# The distributed e2e test starts a nats-server of its own, so the binary is needed either way.
command -v nats-server >/dev/null || apt_install nats-server

if [ -z "${WEFT_TEST_NATS_URL:-}" ]; then
  if ! port_open 4222; then
    mkdir -p /tmp/weft-nats
    nohup nats-server -js -a 127.0.0.1 -p 4222 -sd /tmp/weft-nats >/tmp/weft-nats/server.log 2>&1 &
    wait_port 4222 || { echo "weft: nats-server did not start" >&2; exit 1; }
  fi
  export WEFT_TEST_NATS_URL="nats://127.0.0.1:4222"
fi

# The engine's SQL-node tests need MySQL/MariaDB: root with an empty password over TCP and a `test` database.
if [ -z "${WEFT_TEST_MYSQL_URL:-}" ]; then
  if ! port_open 3306; then
    [ -x /usr/sbin/mariadbd ] || apt_install mariadb-server
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
    start-stop-daemon --start --oknodo --background --chuid mysql --exec /usr/sbin/mariadbd -- \
      --bind-address=127.0.0.1 --port=3306 >&2
    wait_port 3306 || { echo "weft: MariaDB did not start" >&2; exit 1; }
  fi
  mysql_admin() { mariadb -h 127.0.0.1 -u root -e "$1" 2>/dev/null || mariadb -u root -e "$1"; }
  if ! mariadb -h 127.0.0.1 -u root -e 'SELECT 1' >/dev/null 2>&1; then
    # A fresh Debian install lets root in over the unix socket only; the tests log in over TCP.
    mariadb -u root -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket" >&2 \
      || { echo "weft: root cannot log in to MariaDB over TCP; set WEFT_TEST_MYSQL_URL" >&2; exit 1; }
  fi
  mysql_admin 'CREATE DATABASE IF NOT EXISTS test' >&2
  export WEFT_TEST_MYSQL_URL="mysql://root@127.0.0.1:3306/test"
fi

# The OCR node renders PDFs with poppler's pdftoppm; the web automation node drives Debian's Chromium
# (never a downloaded browser). Their tests fail loudly, naming what to install, when these are absent.
command -v pdftoppm >/dev/null || apt_install poppler-utils || echo "weft: pdftoppm missing: the OCR tests will fail" >&2
[ -x "${WEFT_CHROMIUM_PATH:-/usr/bin/chromium}" ] || apt_install chromium || echo "weft: chromium missing: the web automation tests will fail" >&2
