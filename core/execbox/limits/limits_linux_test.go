package limits

import (
	"strings"
	"testing"
)

func TestCgroupDir(t *testing.T) {
	mountinfo := strings.Join([]string{
		"30 25 0:26 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids",
		"31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory",
		"32 25 0:28 /docker/abc /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate",
	}, "\n")
	cases := []struct {
		fstype, opt, path, want string
		ok                      bool
	}{
		{"cgroup", "pids", "/", "/sys/fs/cgroup/pids", true},
		{"cgroup", "pids", "/user.slice", "/sys/fs/cgroup/pids/user.slice", true},
		{"cgroup", "cpu", "/", "", false},
		{"cgroup2", "", "/docker/abc/svc", "/sys/fs/cgroup/unified/svc", true},
		{"cgroup2", "", "/elsewhere", "", false},
	}
	for _, c := range cases {
		got, ok := cgroupDir(mountinfo, c.fstype, c.opt, c.path)
		if got != c.want || ok != c.ok {
			t.Errorf("%s %s %s: %q %v, want %q %v", c.fstype, c.opt, c.path, got, ok, c.want, c.ok)
		}
	}
}
