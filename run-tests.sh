#!/usr/bin/env bash
# Runs every test of kvmq: `mvn -B -T 2 verify`, after installing the one thing Maven can't fetch,
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

# -T 2: two modules at a time where the reactor allows (the two stores, then the Payara and the
# WildFly ITs). Here, on 2 cores and JDK 17 on 2026-12-07, with the Payara ITs two at a time
# too (kvmq-it's pom), every module but kvmq-bench took 12:59 min; CI's pass before both took
# 18:29.
exec mvn -B -T 2 verify "$@"
