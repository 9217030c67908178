// Package metrics holds metalwire's own Prometheus metrics, registered with controller-runtime's
// registry so that the manager's /metrics endpoint serves them beside controller-runtime's
// (reconcile counts, errors, durations and work queues per controller, which are not repeated
// here). Names start with metalwire_.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// PoolAddressesAllocated is how many addresses an IPPool has handed out, per pool.
	PoolAddressesAllocated = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "metalwire_ippool_addresses_allocated",
		Help: "Addresses an IPPool has handed out (status.used).",
	}, []string{"namespace", "pool"})
	// PoolAddressesFree is how many addresses an IPPool can still hand out, per pool.
	PoolAddressesFree = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "metalwire_ippool_addresses_free",
		Help: "Addresses an IPPool can hand out now (status.free).",
	}, []string{"namespace", "pool"})
	// RenderErrors counts renderings refused for bad input (a template that does not fit its
	// host), by the kind that was being rendered.
	RenderErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metalwire_render_errors_total",
		Help: "Renderings of meta data or network data that failed, by kind (Metal3Data, BareMetalHost for pre-provisioning).",
	}, []string{"kind"})
	// HostsAssociated counts BareMetalHosts claimed by a Metal3Machine.
	HostsAssociated = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "metalwire_hosts_associated_total",
		Help: "BareMetalHosts a Metal3Machine has claimed (associated) since the manager started.",
	})
	// DataRenderLatency is how long a Metal3Data took from creation to rendered (its addresses
	// claimed and its Secrets written): what a machine waits for, across reconciles.
	DataRenderLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "metalwire_metal3data_render_latency_seconds",
		Help:    "Time from a Metal3Data's creation until it was rendered (addresses claimed, Secrets written).",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
	})
)

// The fabric's metrics, per switch (namespace, NetworkDevice, switch name) and per
// ClusterNetwork.
var (
	switchLabels = []string{"namespace", "networkdevice", "switch"}
	// FabricBatches counts batches of changes sent to a switch (one session or transaction each).
	FabricBatches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metalwire_fabric_batches_total",
		Help: "Batches of changes sent to a switch.",
	}, switchLabels)
	// FabricChanges counts the changes in those batches (a VLAN, a port).
	FabricChanges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metalwire_fabric_changes_total",
		Help: "Changes sent to a switch (a VLAN created or removed, a port set or reset).",
	}, switchLabels)
	// FabricErrors counts passes over a switch that failed (unreachable, refused, a batch the
	// switch rejected).
	FabricErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metalwire_fabric_errors_total",
		Help: "Passes over a switch that failed: not reachable, login refused, or a batch the switch rejected.",
	}, switchLabels)
	// FabricDrift counts configured ports found changed at the switch.
	FabricDrift = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metalwire_fabric_drift_total",
		Help: "Configured ports a read-back found changed at the switch (drift), each time seen.",
	}, switchLabels)
	// FabricBatchDuration is how long a batch took to apply, from the session's start.
	FabricBatchDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "metalwire_fabric_batch_duration_seconds",
		Help:    "Time one pass over a switch took that sent a batch: connect, read back, apply.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
	}, switchLabels)
	// FabricHosts is how many hosts of a ClusterNetwork are in each state.
	FabricHosts = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "metalwire_fabric_hosts",
		Help: "Hosts of a ClusterNetwork by state: available, configuring, ready, error.",
	}, []string{"namespace", "clusternetwork", "state"})
)

// Collectors are metalwire's own metrics, all registered with controller-runtime's registry.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{PoolAddressesAllocated, PoolAddressesFree, RenderErrors, HostsAssociated, DataRenderLatency,
		FabricBatches, FabricChanges, FabricErrors, FabricDrift, FabricBatchDuration, FabricHosts}
}

func init() {
	ctrlmetrics.Registry.MustRegister(Collectors()...)
}

// FabricHostStates are the states FabricHosts counts.
var FabricHostStates = []string{"available", "configuring", "ready", "error"}

// SetFabricHosts sets a ClusterNetwork's host counts by state (a state missing is 0).
func SetFabricHosts(namespace, clusterNetwork string, byState map[string]int) {
	for _, st := range FabricHostStates {
		FabricHosts.WithLabelValues(namespace, clusterNetwork, st).Set(float64(byState[st]))
	}
}

// ForgetNetworkDevice drops the per-switch series of a NetworkDevice that is gone.
func ForgetNetworkDevice(namespace, networkDevice string) {
	for _, v := range []*prometheus.CounterVec{FabricBatches, FabricChanges, FabricErrors, FabricDrift} {
		v.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "networkdevice": networkDevice})
	}
	FabricBatchDuration.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "networkdevice": networkDevice})
}

// ForgetClusterNetwork drops the gauges of a ClusterNetwork that is gone.
func ForgetClusterNetwork(namespace, clusterNetwork string) {
	for _, st := range FabricHostStates {
		FabricHosts.DeleteLabelValues(namespace, clusterNetwork, st)
	}
}

// ForgetPool drops the gauges of a pool that is gone.
func ForgetPool(namespace, pool string) {
	PoolAddressesAllocated.DeleteLabelValues(namespace, pool)
	PoolAddressesFree.DeleteLabelValues(namespace, pool)
}

// ObserveRendered records a Metal3Data rendered now that was created at created.
func ObserveRendered(created time.Time) {
	if !created.IsZero() {
		DataRenderLatency.Observe(time.Since(created).Seconds())
	}
}
