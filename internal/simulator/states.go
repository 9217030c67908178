package simulator

import (
	"time"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
)

// Delays are how long a simulated host stays in each timed state. Real hosts take minutes; dev
// mode uses seconds and tests milliseconds.
type Delays struct {
	Registering    time.Duration
	Inspecting     time.Duration
	Provisioning   time.Duration
	Deprovisioning time.Duration
}

// DefaultDelays are short enough to watch a demo and long enough to see each state go by.
var DefaultDelays = Delays{
	Registering:    time.Second,
	Inspecting:     2 * time.Second,
	Provisioning:   3 * time.Second,
	Deprovisioning: 2 * time.Second,
}

// facts is what the next state depends on, read from the host, its Secrets and the clock.
type facts struct {
	state bmov1.ProvisioningState
	// inState is how long the host has been in state.
	inState time.Duration
	// hasImage: spec.image.url or spec.customDeploy.method is set.
	hasImage bool
	// online is spec.online.
	online bool
	// consumed: spec.consumerRef is set.
	consumed bool
	// gateOpen: nothing holds inspection back (see preprovisioningGate).
	gateOpen bool
}

// step is what to do next: move to a state, or wait (after, or until something changes when
// after is zero), saying why.
type step struct {
	to    bmov1.ProvisioningState
	after time.Duration
	why   string
}

// next decides a host's next state as BMO would, from spec and time alone.
func next(f facts, d Delays) step {
	timed := func(delay time.Duration, to bmov1.ProvisioningState) step {
		if f.inState < delay {
			return step{after: delay - f.inState, why: "in progress"}
		}
		return step{to: to}
	}
	switch f.state {
	case bmov1.StateNone:
		return step{to: bmov1.StateRegistering}
	case bmov1.StateRegistering:
		if !f.gateOpen {
			return step{why: "waiting for the pre-provisioning network data Secret"}
		}
		return timed(d.Registering, bmov1.StateInspecting)
	case bmov1.StateInspecting:
		return timed(d.Inspecting, bmov1.StateAvailable)
	case bmov1.StateAvailable:
		if f.hasImage && f.online && f.consumed {
			return step{to: bmov1.StateProvisioning}
		}
		return step{why: "waiting for spec.image, spec.online and spec.consumerRef"}
	case bmov1.StateProvisioning:
		if !f.hasImage {
			return step{to: bmov1.StateDeprovisioning}
		}
		return timed(d.Provisioning, bmov1.StateProvisioned)
	case bmov1.StateProvisioned:
		if !f.hasImage {
			return step{to: bmov1.StateDeprovisioning}
		}
		return step{why: "provisioned"}
	case bmov1.StateDeprovisioning:
		return timed(d.Deprovisioning, bmov1.StateAvailable)
	default:
		return step{why: "the simulator does not model state " + string(f.state)}
	}
}
