. "$(dirname "$0")/../lib.sh"
load_softrma
echo 1 > /sys/module/softrma/parameters/force_wire
add_softrma0
gid=$(gid_index softrma0 10.9.0.1)
for s in 1000 8192; do
ibv_rc_pingpong -d softrma0 -g $gid -c -n 200 -s $s > /tmp/s.log 2>&1 &
sleep 1
ibv_rc_pingpong -d softrma0 -g $gid -c -n 200 -s $s 10.9.0.1 | tail -1
wait
done
ibv_uc_pingpong -d softrma0 -g $gid -c -n 200 -s 1000 > /tmp/s.log 2>&1 &
sleep 1
ibv_uc_pingpong -d softrma0 -g $gid -c -n 200 -s 1000 10.9.0.1 | tail -1
wait
rdma statistic show link softrma0/1
echo 0 > /sys/module/softrma/parameters/force_wire
