#!/usr/bin/env bash
# Runs every test of kvmq: `mvn -B verify`, after installing the one thing Maven can't fetch,
# Debian's headless Chromium and its chromedriver, which DashboardIT drives. Maven fetches
# everything else itself (Payara Micro, WildFly, embedded PostgreSQL).
#
#   ./run-tests.sh              JDK on the PATH (17+), integration tests on Payara Micro 6
#   ./run-tests.sh -Ppayara7    with JAVA_HOME on JDK 21+: on Payara Micro 7
#
# Extra arguments go to Maven.
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  echo "== installing Debian's chromium and chromium-driver for DashboardIT"
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "DashboardIT needs /usr/bin/chromium and /usr/bin/chromedriver: install the Debian packages" \
        "chromium and chromium-driver as root, then run this again" >&2
      exit 1
    fi
    sudo="sudo"
  fi
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y chromium chromium-driver
fi

exec mvn -B verify "$@"
