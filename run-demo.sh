#!/usr/bin/env bash
# Builds the kvmq demo and runs it on Payara Micro. Needs JDK 17+ and Maven 3.8+; Maven
# fetches everything else (Payara Micro included) from Maven Central.
#
#   ./run-demo.sh
#
# Settings (environment variables):
#   KVMQ_DEMO_PORT       HTTP port (default 8080)
#   KVMQ_DATA_DIR        where the queue's store and journal.log live (default ./kvmq-data);
#                        the same directory after a restart, or a kill -9, keeps the jobs
#   KVMQ_ADMIN_PASSWORD  the password of the user "admin" of the REST API (default: random,
#                        printed below)
#   JAVA_OPTS            extra JVM options for Payara Micro (e.g. -Djava.io.tmpdir=...)
#   KVMQ_DEMO_SKIP_BUILD 1: start the WAR built last time, without running Maven
#
# Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")"

port="${KVMQ_DEMO_PORT:-8080}"
data_dir="${KVMQ_DATA_DIR:-./kvmq-data}"
if [ -z "${KVMQ_ADMIN_PASSWORD:-}" ]; then
  KVMQ_ADMIN_PASSWORD="$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
fi
export KVMQ_ADMIN_PASSWORD

if [ "${KVMQ_DEMO_SKIP_BUILD:-0}" != 1 ]; then
  echo "Building kvmq-demo (the first build downloads its dependencies)..."
  mvn -B -q -DskipTests package -pl kvmq-demo -am
fi

mkdir -p "$data_dir"
data_dir="$(cd "$data_dir" && pwd)"

cat <<EOF

  kvmq demo: starting Payara Micro, about 20 s
    URL:       http://localhost:${port}/
    REST API:  http://localhost:${port}/kvmq/queues/demo
    user:      admin
    password:  ${KVMQ_ADMIN_PASSWORD}
    data:      ${data_dir} (store/, journal.log)

EOF

# exec: the JVM takes this shell's process id, so stopping or killing it stops Payara.
# shellcheck disable=SC2086 # JAVA_OPTS is a list of options
exec java ${JAVA_OPTS:-} \
  -Dkvmq.data-dir="${data_dir}/store" \
  -Dkvmq.demo.journal="${data_dir}/journal.log" \
  -jar kvmq-demo/target/payara-micro.jar \
  --deploy kvmq-demo/target/kvmq-demo.war \
  --contextroot / \
  --port "${port}" \
  --nohazelcast
