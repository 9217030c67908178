package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/metalwire/metalwire/internal/controller/allocationview"
	"github.com/metalwire/metalwire/internal/controller/clusternetwork"
	"github.com/metalwire/metalwire/internal/controller/hostnic"
	"github.com/metalwire/metalwire/internal/controller/ippool"
	"github.com/metalwire/metalwire/internal/controller/labelsync"
	"github.com/metalwire/metalwire/internal/controller/metal3cluster"
	"github.com/metalwire/metalwire/internal/controller/metal3data"
	"github.com/metalwire/metalwire/internal/controller/metal3dataclaim"
	"github.com/metalwire/metalwire/internal/controller/metal3datatemplate"
	"github.com/metalwire/metalwire/internal/controller/metal3machine"
	"github.com/metalwire/metalwire/internal/controller/metal3machinetemplate"
	"github.com/metalwire/metalwire/internal/controller/metal3remediation"
	"github.com/metalwire/metalwire/internal/controller/networkdevice"
	"github.com/metalwire/metalwire/internal/controller/preprovisioning"
	"github.com/metalwire/metalwire/internal/controller/waits"
	"github.com/metalwire/metalwire/internal/switchdriver"

	// The switch drivers metalwire ships, registered in switchdriver.Default.
	_ "github.com/metalwire/metalwire/internal/switchdriver/builtin"
)

// Group names a set of controllers that run together.
type Group string

// The controller groups, in the order they are set up.
const (
	// Infrastructure runs the Cluster API provider: Metal3Cluster, Metal3Machine, the
	// Metal3DataTemplate -> Metal3DataClaim -> Metal3Data chain and Metal3Remediation.
	Infrastructure Group = "infrastructure"
	// IPAM runs the ipam.metal3.io IPPool allocator and Cluster API IPAddressClaim support.
	IPAM Group = "ipam"
	// Preprovisioning renders DHCP-less pre-provisioning network data for BareMetalHosts.
	Preprovisioning Group = "preprovisioning"
	// Fabric runs switch-port automation: ClusterNetwork (VLANs, hosts) and NetworkDevice (the
	// only controller that talks to switches).
	Fabric Group = "fabric"
)

// AllGroups lists every group; it is the default of --controllers.
var AllGroups = []Group{Infrastructure, IPAM, Preprovisioning, Fabric}

// Options carries what every reconciler may need from the command line.
type Options struct {
	// Concurrency is the number of objects each controller reconciles at once.
	Concurrency int
	// IPReuse names the address claims of a Metal3Data after its BareMetalHost (<host>-<pool>)
	// rather than the Metal3Data, so that a host keeps its address across re-provisioning and
	// shares it with pre-provisioning (CAPM3's enableBMHNameBasedPreallocation).
	IPReuse bool
	// FabricConcurrency bounds how many switches are configured at once (--fabric-concurrency).
	FabricConcurrency int
	// ControllerConcurrency overrides Concurrency for the controllers it names (CAPM3's
	// --<controller>-concurrency flags); a missing or zero entry means Concurrency.
	ControllerConcurrency map[string]int
	// WatchFilter is Cluster API's --watch-filter: with a value, every controller acts only on
	// objects labelled cluster.x-k8s.io/watch-filter=<value> (see package watchfilter).
	WatchFilter string
	// FastTrack keeps deprovisioned hosts powered on (CAPM3_FAST_TRACK).
	FastTrack bool
	// RemediationNodeMode says whether remediations taint or delete the Node of a host that is
	// off (--remediation-node-mode); "" is auto, upstream's choice by the management cluster's
	// Kubernetes version.
	RemediationNodeMode metal3remediation.NodeMode
	// SwitchDrivers maps networkOS to switch drivers; nil uses switchdriver.Default, where the
	// driver packages register themselves.
	SwitchDrivers *switchdriver.Registry
	// ClusterCache reaches workload clusters (cachepolicy.NewClusterCache); the infrastructure group needs it.
	ClusterCache clustercache.ClusterCache
	// RenderedSecrets is the metadata-only cache of the Secrets a Metal3Data renders
	// (cachepolicy.NewRenderedSecrets); the infrastructure group needs it.
	RenderedSecrets cache.Cache
	// SwitchRetryMin and SwitchRetryMax bound the wait before a failed switch is tried again,
	// and VLANRetry is how often a ClusterNetwork whose VLAN range ran out looks again; zero is
	// each controller's default (tests shorten them).
	SwitchRetryMin, SwitchRetryMax, VLANRetry time.Duration
	// HostReportInterval is how often the NetworkDevice controller asks again about hosts that
	// have not reported their network configured; zero is its default.
	HostReportInterval time.Duration
	// SwitchReadAgainAfter is how long a switch read and left in line is not logged in to again
	// by a pass that wants nothing new of it (the manager: half of --sync-period); zero: always.
	SwitchReadAgainAfter time.Duration

	// dataProgress is shared by the Metal3Data and Metal3DataClaim controllers of one Setup.
	dataProgress *waits.Progress
}

// setupFunc adds one reconciler to a manager.
type setupFunc func(ctx context.Context, mgr ctrl.Manager, opts Options) error

// registry maps each group to its reconcilers; a group with none starts nothing.
var registry = map[Group][]namedSetup{
	Infrastructure: {
		{"metal3cluster", setupMetal3Cluster},
		{"metal3machine", setupMetal3Machine},
		{"metal3datatemplate", setupMetal3DataTemplate},
		{"metal3dataclaim", setupMetal3DataClaim},
		{"metal3data", setupMetal3Data},
		{metal3machinetemplate.ControllerName, setupMetal3MachineTemplate},
		{labelsync.ControllerName, setupLabelSync},
		{"metal3remediation", setupMetal3Remediation},
	},
	IPAM: {
		{ippool.ControllerName, setupIPPool},
		{allocationview.ControllerName, setupAllocationView},
	},
	Preprovisioning: {
		{"preprovisioning", setupPreprovisioning},
	},
	Fabric: {
		{"clusternetwork", setupClusterNetwork},
		{"networkdevice", setupNetworkDevice},
		{hostnic.ControllerName, setupHostNIC},
	},
}

func setupClusterNetwork(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	r := &clusternetwork.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), WatchFilter: opts.WatchFilter, VLANRetry: opts.VLANRetry}
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

func setupNetworkDevice(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	r := &networkdevice.Reconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("networkdevice"), Drivers: opts.SwitchDrivers, Concurrency: opts.FabricConcurrency, WatchFilter: opts.WatchFilter,
		RetryMin: opts.SwitchRetryMin, RetryMax: opts.SwitchRetryMax, HostReportInterval: opts.HostReportInterval,
		ReadAgainAfter: opts.SwitchReadAgainAfter,
	}
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

func setupHostNIC(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	r := &hostnic.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(hostnic.ControllerName), WatchFilter: opts.WatchFilter}
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

func setupPreprovisioning(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	return preprovisioning.SetupWithManager(ctx, mgr, opts.Concurrency, opts.WatchFilter)
}

func setupAllocationView(_ context.Context, mgr ctrl.Manager, opts Options) error {
	return (&allocationview.Reconciler{}).SetupWithManager(mgr, opts.Concurrency)
}

func setupIPPool(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	return (&ippool.Reconciler{WatchFilter: opts.WatchFilter}).SetupWithManager(ctx, mgr, opts.Concurrency)
}

// errNoClusterCache: the infrastructure group's controllers reach workload clusters through one
// shared ClusterCache.
var errNoClusterCache = errors.New("no ClusterCache: make one with cachepolicy.NewClusterCache and pass it in Options.ClusterCache")

func setupMetal3Cluster(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	r := &metal3cluster.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("metal3cluster"), WatchFilter: opts.WatchFilter}
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

// setupMetal3Machine hands the machine controller the data-templating chain's claimer, so
// machines with spec.dataTemplate get their Metal3DataClaim and, once rendered, its Secrets.
func setupMetal3Machine(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.ClusterCache == nil {
		return errNoClusterCache
	}
	r := &metal3machine.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("metal3machine"),
		Data:      &metal3dataclaim.Claimer{Client: mgr.GetClient()},
		// CAPM3 parity: --watch-filter and fast track.
		WatchFilter: opts.WatchFilter,
		FastTrack:   opts.FastTrack,
	}
	r.ClusterCache = opts.ClusterCache
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

func setupMetal3MachineTemplate(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	r := &metal3machinetemplate.Reconciler{Client: mgr.GetClient(), WatchFilter: opts.WatchFilter}
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

// setupLabelSync reaches workload clusters through the ClusterCache, as the machine controller
// does.
func setupLabelSync(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.ClusterCache == nil {
		return errNoClusterCache
	}
	r := &labelsync.Reconciler{
		Client:         mgr.GetClient(),
		Recorder:       mgr.GetEventRecorder(labelsync.ControllerName),
		WorkloadClient: opts.ClusterCache.GetClient,
		WatchFilter:    opts.WatchFilter,
	}
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

func setupMetal3DataTemplate(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	r := &metal3datatemplate.Reconciler{Client: mgr.GetClient(), WatchFilter: opts.WatchFilter}
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

func setupMetal3DataClaim(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	r := &metal3dataclaim.Reconciler{Client: mgr.GetClient(), WatchFilter: opts.WatchFilter, Progress: opts.dataProgress}
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

func setupMetal3Data(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	r := &metal3data.Reconciler{
		Progress:    opts.dataProgress,
		Client:      mgr.GetClient(),
		APIReader:   mgr.GetAPIReader(),
		IPReuse:     opts.IPReuse,
		Recorder:    mgr.GetEventRecorder("metal3data"),
		WatchFilter: opts.WatchFilter,
		// The rendered Secrets' metadata: the manager's cache does not hold them.
		RenderedSecrets: opts.RenderedSecrets,
	}
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

// setupMetal3Remediation reaches workload clusters through the ClusterCache, as the machine
// controller does.
func setupMetal3Remediation(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.ClusterCache == nil {
		return errNoClusterCache
	}
	r := &metal3remediation.Reconciler{
		Client:         mgr.GetClient(),
		Recorder:       mgr.GetEventRecorder("metal3remediation"),
		WorkloadClient: opts.ClusterCache.GetClient,
		NodeMode:       opts.RemediationNodeMode,
		WatchFilter:    opts.WatchFilter,
	}
	return r.SetupWithManager(ctx, mgr, opts.Concurrency)
}

type namedSetup struct {
	name  string
	setup setupFunc
}

// ParseGroups turns --controllers values into groups, refusing unknown names.
func ParseGroups(names []string) ([]Group, error) {
	groups := make([]Group, 0, len(names))
	for _, name := range names {
		g := Group(strings.TrimSpace(name))
		if !slices.Contains(AllGroups, g) {
			return nil, fmt.Errorf("--controllers: unknown group %q; choose from %s", name, strings.Join(GroupNames(), ", "))
		}
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	return groups, nil
}

// GroupNames lists the names of every group.
func GroupNames() []string {
	names := make([]string, len(AllGroups))
	for i, g := range AllGroups {
		names[i] = string(g)
	}
	return names
}

// Setup adds the reconcilers of the given groups to mgr and returns the names of those added.
func Setup(ctx context.Context, mgr ctrl.Manager, groups []Group, opts Options) ([]string, error) {
	var added []string
	// The Metal3Data controller records when a namespace's data was last rendered; it and the
	// Metal3DataClaim controller hold a new object's wait while others are served.
	opts.dataProgress = &waits.Progress{}
	for _, g := range AllGroups {
		if !slices.Contains(groups, g) {
			continue
		}
		for _, s := range registry[g] {
			o := opts
			if n := opts.ControllerConcurrency[s.name]; n > 0 {
				o.Concurrency = n
			}
			if err := s.setup(ctx, mgr, o); err != nil {
				return added, fmt.Errorf("setting up the %s controller (%s group): %w", s.name, g, err)
			}
			added = append(added, s.name)
		}
	}
	return added, nil
}
