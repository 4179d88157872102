#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Many objects, many processes, traffic, and teardown under that load: four
# processes each create and destroy 250 QPs and 2500 MRs in rounds (1000 QPs
# and 10000 MRs at a time) while ib_write_bw runs; every round completes.
# Then, with the same load running, "rdma link delete" and "rmmod softrma"
# complete within a bound, and every process ends cleanly.
. "$(dirname "$0")/../lib.sh"
# timeout: 400 s

add_softrma0

# churn SECONDS: the four processes, logs in /tmp/churn.N.
churn() {
	churners=
	for n in 1 2 3 4; do
		"$SOFTRMA_BIN/limits" softrma0 churn "$1" 250 2500 > "/tmp/churn.$n" 2>&1 &
		churners="$churners $!"
	done
}
# churn_wait WHAT: every churn process ends within 60 s, successfully.
churn_wait() {
	n=0
	for pid in $churners; do
		n=$((n + 1))
		timeout "$(bound 60)" sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.5; done" ||
			fail "$1: churn $n did not end: $(cat "/tmp/churn.$n")"
		wait "$pid" || fail "$1: churn $n: $(cat "/tmp/churn.$n")"
	done
	info "$1: $(cat /tmp/churn.1 /tmp/churn.2 /tmp/churn.3 /tmp/churn.4 |
		sed 's/^# churn: //' | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
}

churn 20
pair "ib_write_bw under churn" "timeout $(bound 120) ib_write_bw -d softrma0 -x 1 -n 2000"
churn_wait "objects with traffic"
grep -q "rounds of 250 QPs" /tmp/churn.1 || fail "no whole round: $(cat /tmp/churn.1)"

# Teardown under load: the device goes while objects come and go and a
# connection runs; the churners see it go and end, and perftest ends or
# dies at once to kill -9.
ib_write_bw -d softrma0 -x 1 -D 100 > /tmp/server.log 2>&1 &
server=$!
sleep 1
ib_write_bw -d softrma0 -x 1 -D 100 10.9.0.1 > /tmp/client.log 2>&1 &
client=$!
churn 120
sleep 5
timeout "$(bound 60)" rdma link delete softrma0 || fail "rdma link delete under load: failed or hung"
churn_wait "rdma link delete under load"
kill -9 $server $client 2>/dev/null
timeout "$(bound 10)" sh -c "while kill -0 $server || kill -0 $client; do sleep 0.2; done 2>/dev/null" ||
	fail "ib_write_bw survives kill -9 after its device went away"
wait

rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
wait_gid softrma0 "::ffff:10.9.0.1" || fail "no GID"
churn 120
sleep 5
timeout "$(bound 60)" rmmod softrma || fail "rmmod under load: failed or hung"
churn_wait "rmmod under load"
