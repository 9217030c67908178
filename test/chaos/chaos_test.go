package chaos

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// convergeTimeout bounds how long a run may take to render n machines on a loaded machine.
func convergeTimeout(n int) time.Duration {
	return 5*time.Minute + time.Duration(n)*1500*time.Millisecond
}

// withoutLeaderElection is for scenarios with one manager: a restart need not wait for the
// lease the killed process held.
const withoutLeaderElection = "--leader-elect=false"

// TestManagerKilled kills the manager with SIGKILL at random moments while the machines' data
// is rendered (CHAOS_KILLS times), starting it again at once each time.
func TestManagerKilled(t *testing.T) {
	c := startCluster(t)
	n := settings.machines
	m3ms := setupData(t, c, n)
	rnd := newRand(t)

	mgr := startManager(t, c, "manager-0", withoutLeaderElection)
	start := time.Now()
	created := make(chan error, 1)
	go func() { created <- createClaims(c, m3ms) }()
	// Every kill lands during the scale-up: at a random point of its progress (between 5% and
	// 95% of the machines served, in order), a random moment up to a second after it is reached.
	targets := make([]int, settings.kills)
	for k := range targets {
		targets[k] = n/20 + rnd.IntN(max(1, n*9/10))
	}
	slices.Sort(targets)
	var lastKill time.Time
	for k, target := range targets {
		served := 0
		waitFor(t, convergeTimeout(n), fmt.Sprintf("%d machines served before kill %d", target, k+1), func() bool {
			var err error
			served, err = claimsServed(context.Background(), c)
			return err == nil && served >= target
		})
		time.Sleep(time.Duration(rnd.IntN(1000)) * time.Millisecond)
		mgr.kill()
		lastKill = time.Now()
		fmt.Printf("  kill %d at %s: %d of %d claims served (kill planned at %d)\n", k+1, seconds(time.Since(start)), served, n, target)
		mgr = startManager(t, c, fmt.Sprintf("manager-%d", k+1), withoutLeaderElection)
	}
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	done := waitRendered(t, c, n, convergeTimeout(n))
	checkInvariants(t, c, n)
	if mgr.exited() {
		t.Fatal("the last manager exited on its own")
	}
	fmt.Printf("manager killed: %d machines, %d kills survived, all rendered %s after the start and %s after the last kill (load %s)\n",
		n, settings.kills, seconds(done.Sub(start)), seconds(done.Sub(lastKill)), loadAverage())
}

// TestAPIServerRestarted stops kube-apiserver and etcd mid-run and starts them again on the
// same data: the manager, still running, must pick up where it was.
func TestAPIServerRestarted(t *testing.T) {
	c := startCluster(t)
	n := settings.machines
	m3ms := setupData(t, c, n)
	mgr := startManager(t, c, "manager", withoutLeaderElection)
	start := time.Now()
	if err := createClaims(c, m3ms); err != nil {
		t.Fatal(err)
	}
	at := waitSome(t, c, n/3)
	fmt.Printf("  stopping kube-apiserver and etcd at %s: %s\n", seconds(time.Since(start)), at)
	stopping := time.Now()
	if err := c.env.StopControlPlane(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	fmt.Printf("  stopped in %s\n", seconds(down.Sub(stopping)))
	time.Sleep(3 * time.Second)
	if err := c.env.StartControlPlane(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	fmt.Printf("  control plane back after %s down\n", seconds(back.Sub(down)))
	done := waitRendered(t, c, n, convergeTimeout(n))
	checkInvariants(t, c, n)
	if mgr.exited() {
		t.Fatal("the manager exited instead of waiting for the API server")
	}
	fmt.Printf("API server restarted: %d machines, all rendered %s after the start and %s after the API server was back (load %s)\n",
		n, seconds(done.Sub(start)), seconds(done.Sub(back)), loadAverage())
}

// Short leader election settings, so a hand-over takes seconds. The renew deadline leaves the
// leader's lease requests (each may take half of it) time on a loaded machine.
const (
	leaseDuration = 12 * time.Second
	retryPeriod   = 2 * time.Second
	// acquired is what client-go logs when a replica becomes leader.
	acquired = "Successfully acquired lease"
)

var leaderElection = []string{"--leader-elect=true", "--leader-elect-lease-duration=12s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s"}

// TestLeaderHandOver runs two replicas with leader election and kills the leader mid-run: the
// other takes the lease over once it expires and finishes the run.
func TestLeaderHandOver(t *testing.T) {
	c := startCluster(t)
	n := settings.machines
	m3ms := setupData(t, c, n)
	ctx := context.Background()

	a := startReplica(t, c, "replica-a", leaderElection...)
	waitFor(t, 2*time.Minute, "replica-a to lead", a.leads)
	b := startReplica(t, c, "replica-b", leaderElection...)

	start := time.Now()
	if err := createClaims(c, m3ms); err != nil {
		t.Fatal(err)
	}
	at := waitSome(t, c, n/3)
	// Kill whichever leads now (on a loaded machine the lease may have changed hands already).
	leaderRep, other := a, b
	waitFor(t, 2*time.Minute, "a leader", func() bool { return a.leads() || b.leads() })
	if b.leads() {
		leaderRep, other = b, a
	}
	lease := &coordinationv1.Lease{}
	if err := c.env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "metalwire-manager.metalwire.io"}, lease); err != nil {
		t.Fatal(err)
	}
	holder := *lease.Spec.HolderIdentity
	leaderRep.kill()
	killed := time.Now()
	fmt.Printf("  leader %s killed at %s: %s\n", leaderRep.name, seconds(killed.Sub(start)), at)
	var takeover time.Duration
	waitFor(t, 2*time.Minute, other.name+" to take the lease over", func() bool {
		l := &coordinationv1.Lease{}
		if err := c.env.Client.Get(ctx, client.ObjectKeyFromObject(lease), l); err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == holder {
			return false
		}
		takeover = time.Since(killed)
		return true
	})
	// A follower counts the lease's age from when it last saw the lease change, which it reads
	// every retry period: the dead leader's last renewal (at most a retry period before the
	// kill) is seen up to a retry period late, the lease then runs its duration, and the next
	// try (up to a retry period later, plus 20% jitter) takes it. A loaded machine adds a
	// little to each request.
	if limit := leaseDuration + 3*retryPeriod + 2*time.Second; takeover > limit {
		t.Errorf("%s took the lease over %s after the kill; the lease settings promise at most %s", other.name, takeover, limit)
	}
	done := waitRendered(t, c, n, convergeTimeout(n))
	checkInvariants(t, c, n)
	if !other.leads() {
		t.Fatalf("%s does not lead", other.name)
	}
	fmt.Printf("leader hand-over: %d machines, lease %s / retry %s, taken over %s after the kill, all rendered %s after the start and %s after the kill; replicas restarted after losing the lease under load: %d (load %s)\n",
		n, leaseDuration, retryPeriod, seconds(takeover), seconds(done.Sub(start)), seconds(done.Sub(killed)), a.restarts()+b.restarts(), loadAverage())
}

// TestScaleUpAndStraightDown creates every machine's claim and deletes them all straight away,
// while the data is being rendered: nothing may be left behind.
func TestScaleUpAndStraightDown(t *testing.T) {
	c := startCluster(t)
	n := settings.machines
	m3ms := setupData(t, c, n)
	startManager(t, c, "manager", withoutLeaderElection)
	start := time.Now()
	if err := createClaims(c, m3ms); err != nil {
		t.Fatal(err)
	}
	deleteClaims(t, c, m3ms)
	ctx := context.Background()
	waitFor(t, convergeTimeout(n), "every claim to be gone with its Metal3Data, IPClaims, IPAddresses and Secrets", func() bool {
		w, err := readWorld(ctx, c)
		return err == nil && len(w.claims)+len(w.data)+len(w.ipClaims)+len(w.addresses)+len(w.secrets) == 0
	})
	done := time.Now()
	checkInvariants(t, c, 0)
	fmt.Printf("scale up and straight down: %d machines, all gone %s after the first claim (load %s)\n", n, seconds(done.Sub(start)), loadAverage())
}

// waitSome waits until at least k machines are rendered, and says where the run stands.
func waitSome(t *testing.T, c *cluster, k int) string {
	t.Helper()
	var at string
	waitFor(t, convergeTimeout(k), fmt.Sprintf("%d machines to be rendered", k), func() bool {
		w, err := readWorld(context.Background(), c)
		if err != nil {
			return false
		}
		at = fmt.Sprintf("%d rendered, %d Metal3Data, %d IPAddresses", w.renderedCount(), len(w.data), len(w.addresses))
		return w.renderedCount() >= k
	})
	return at
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
