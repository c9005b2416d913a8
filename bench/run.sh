#!/bin/sh
# Builds kvmq-bench (and the modules it needs), then runs QueueBench: kvmq beside db-scheduler,
# JobRunr and Quartz; prints one table. Options go to QueueBench, for example:
#   bench/run.sh                                   everything, 3 repetitions (not timed since the
#                                                  warm-up rounds; one repetition of the four
#                                                  slowest peers' drains took 12 min on 2 cores)
#   bench/run.sh --systems kvmq-memory,quartz-ram --scenarios drain --reps 1
#   bench/run.sh --systems kvmq --scenarios claim --backlogs 0,10000,100000
#   bench/run.sh --scenarios fsync                 what a forced write costs on the disk of --dir
#   bench/run.sh --systems kvmq --scenarios drain-unique   a unique key on every job vs none
#   bench/run.sh --systems kvmq-postgres --scenarios nodes --reps 3
#                                                  one backlog drained by 1, 2 and 4 worker
#                                                  JVMs on one database (--nodes 1,2,4)
# The whole list of options: kvmq-bench/src/main/java/dev/kvmq/bench/queue/QueueBench.java.
#   bench/run.sh flow                              FlowBench instead: the cost of unique keys,
#                                                  groups and rate limits against the plain drain,
#                                                  on every store, 3 repetitions
#   bench/run.sh flow --stores memory --scenarios plain,saturated --jobs 2000 --backlog 10000
#   bench/run.sh flow --scenarios prune --retained 1000000   a drain while 1M retained completed
#                                                  jobs are pruned, against a drain with none kept
#   (options: kvmq-bench/src/main/java/dev/kvmq/bench/FlowBench.java)
# Set KVMQ_BENCH_NO_BUILD=1 to skip the build; MVN to change the Maven command.
set -e
cd "$(dirname "$0")/.."
if [ -z "$KVMQ_BENCH_NO_BUILD" ]; then
  ${MVN:-mvn} -B -q -pl kvmq-bench -am package -DskipTests
fi
MAIN=dev.kvmq.bench.queue.QueueBench
if [ "$1" = flow ]; then
  MAIN=dev.kvmq.bench.FlowBench
  shift
fi
exec java -cp "kvmq-bench/target/kvmq-bench-0.1.0-SNAPSHOT.jar:kvmq-bench/target/lib/*" \
  "$MAIN" "$@"
