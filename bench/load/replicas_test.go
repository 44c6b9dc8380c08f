package load_test

import (
	"os/exec"
	"testing"

	"github.com/mcpkit/mcpkit/bench/load"
)

// TestReplicas is the smoke run of the replicas case (bench/scale.sh
// -replicas): a real redis-server, three mcpkit processes sharing it, 20
// listen streams on each, one change made on each replica, every
// notification checked (one per stream per change, its own
// subscriptionId) by MeasureReplicas.
func TestReplicas(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (Debian package redis-server): skipping the replicas case, which needs a real Redis")
	}
	r, err := load.StartRedis(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	s, err := load.MeasureReplicas(serverArgv(t), r, 3, 20, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Replica) != 3 {
		t.Fatalf("%d replicas measured, want 3", len(s.Replica))
	}
	if !(0 < s.P50 && s.P50 <= s.P99 && s.P99 <= s.Max) {
		t.Errorf("p50 %v, p99 %v, max %v: want 0 < p50 <= p99 <= max", s.P50, s.P99, s.Max)
	}
	if s.RedisRTT <= 0 || s.RedisHop <= 0 {
		t.Errorf("Redis round trip %v, touch to Redis %v: want both > 0", s.RedisRTT, s.RedisHop)
	}
	for i, f := range s.Replica {
		// Each replica had one change of its own and two from the others.
		if f.Local.P50 <= 0 || f.Remote.P50 <= 0 {
			t.Errorf("replica %d: local %+v, remote %+v: want deliveries of both", i+1, f.Local, f.Remote)
		}
	}
}
