package memorylimit

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
)

// The Deployment's 512Mi gives the collector 460.8 MiB: what the start log and the docs say.
func TestSoftIsNinetyPercentOfTheContainer(t *testing.T) {
	if got, want := Soft(512<<20), int64(483183820); got != want {
		t.Errorf("Soft(512Mi) = %d (%s), want %d (460.8MiB)", got, MiB(got), want)
	}
	if got := MiB(Soft(512 << 20)); got != "460.8MiB" {
		t.Errorf("MiB(Soft(512Mi)) = %q, want 460.8MiB", got)
	}
}

// GOMEMLIMIT in the environment is Go's own and wins: the manager reports it and reads no
// cgroup.
func TestSetLeavesGOMEMLIMITAlone(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "300MiB")
	if got := Set(); got.Source != "GOMEMLIMIT" || got.Container != 0 {
		t.Errorf("Set() with GOMEMLIMIT set = %+v, want source GOMEMLIMIT and no container limit read", got)
	}
}

// The start log names the limit and where it came from, or says there is none and what to do.
func TestLogSaysWhichLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit Limit
		want  []string
	}{
		{"cgroup", Limit{Soft: Soft(512 << 20), Container: 512 << 20, Source: "cgroup"},
			[]string{`"soft memory limit"`, `"softLimit"="460.8MiB"`, `"containerLimit"="512.0MiB"`, `90% of the container's memory limit`}},
		{"environment", Limit{Soft: 300 << 20, Source: "GOMEMLIMIT"}, []string{`"softLimit"="300.0MiB"`, `"source"="GOMEMLIMIT"`}},
		{"off", Limit{Source: "GOMEMLIMIT"}, []string{"no soft memory limit: GOMEMLIMIT=off"}},
		{"none", Limit{Source: "none"}, []string{"no soft memory limit: the container has no memory limit and GOMEMLIMIT is not set"}},
		{"unreadable", Limit{Source: "none", Err: errors.New("failed to read memory.max")},
			[]string{"could not be read; set GOMEMLIMIT", "failed to read memory.max"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var line string
			c.limit.Log(funcr.New(func(prefix, args string) { line = prefix + " " + args }, funcr.Options{}))
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("log line %s lacks %s", line, w)
				}
			}
		})
	}
}
