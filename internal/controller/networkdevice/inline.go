package networkdevice

import (
	"context"
	"maps"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// A pass that wants of a switch exactly what the last pass read there and left in line does not
// log in to it again for a while (Reconciler.ReadAgainAfter): a slow switch's login costs
// seconds, and in a burst of hosts joining most events (a NIC labelled, another switch's host
// placed) change nothing on most switches. A change of the NetworkDevice itself (spec,
// annotations), of what is wanted of the switch, an error or a drift found last time, a dry run,
// and a switch whose hosts report back all read the switch again, as does every pass once the
// time is up — the periodic resync (--sync-period, twice ReadAgainAfter) is such a pass, so
// drift is still found.

// credentialsVersion is the resourceVersion of the credentials Secret of a switch (resolved:
// effectiveSwitch), "" for one without. ok is false when it cannot be read (the pass then tries
// the switch and says why).
func (r *Reconciler) credentialsVersion(ctx context.Context, ns string, sw netv1.Switch) (string, bool) {
	if sw.CredentialsRef == nil {
		return "", true
	}
	secret, err := r.secrets.get(ctx, types.NamespacedName{Namespace: ns, Name: sw.CredentialsRef.Name})
	if err != nil {
		return "", false
	}
	return secret.ResourceVersion, true
}

// inLine is, per switch, the last pass that left it in line.
type inLine struct {
	mu sync.Mutex
	m  map[string]inLineEntry
}

type inLineEntry struct {
	at          time.Time
	sw          netv1.Switch
	credentials string // the credentials Secret's resourceVersion
	want        fabric.State
	generation  int64
	annotations map[string]string
}

// fresh says whether the switch was read and left in line less than after ago, reached the
// same way with the same credentials, with the same wants and the same NetworkDevice generation
// and annotations.
func (l *inLine) fresh(key string, nd *netv1.NetworkDevice, sw netv1.Switch, credentials string, want fabric.State, after time.Duration, now time.Time) bool {
	if after <= 0 {
		return false
	}
	l.mu.Lock()
	e, ok := l.m[key]
	l.mu.Unlock()
	return ok && now.Sub(e.at) < after && e.generation == nd.Generation && maps.Equal(e.annotations, nd.Annotations) && e.credentials == credentials &&
		equality.Semantic.DeepEqual(e.sw, sw) && reflect.DeepEqual(e.want, want)
}

// record remembers a pass that left the switch in line, or (ok false) forgets the switch.
func (l *inLine) record(key string, nd *netv1.NetworkDevice, sw netv1.Switch, credentials string, want fabric.State, ok bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !ok {
		delete(l.m, key)
		return
	}
	if l.m == nil {
		l.m = map[string]inLineEntry{}
	}
	l.m[key] = inLineEntry{at: now, sw: *sw.DeepCopy(), credentials: credentials, want: want, generation: nd.Generation, annotations: maps.Clone(nd.Annotations)}
}
