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

func init() {
	ctrlmetrics.Registry.MustRegister(PoolAddressesAllocated, PoolAddressesFree, RenderErrors, HostsAssociated, DataRenderLatency)
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
