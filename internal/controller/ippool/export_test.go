package ippool

import (
	"context"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// WritePool and CopyPool let the external tests drive the pool's write against a real API server.
func (r *Reconciler) WritePool(ctx context.Context, before, pool *ipamv1.IPPool) error {
	return r.writePool(ctx, before, pool)
}

var CopyPool = copyPool
