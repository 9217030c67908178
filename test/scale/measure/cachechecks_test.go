package measure

import (
	"strings"
	"testing"
)

func TestCacheChecksTakeOnOrOff(t *testing.T) {
	for v, want := range map[string]bool{"": false, "off": false, "on": true} {
		on, err := cacheChecks(v)
		if err != nil || on != want {
			t.Errorf("%s=%q: %v, %v; want %v", CacheChecksEnv, v, on, err, want)
		}
	}
	for _, v := range []string{"1", "true", "ON"} {
		if _, err := cacheChecks(v); err == nil || !strings.Contains(err.Error(), CacheChecksEnv) {
			t.Errorf("%s=%q: %v, want an error naming the variable", CacheChecksEnv, v, err)
		}
	}
}
