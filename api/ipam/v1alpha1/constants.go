package v1alpha1

import (
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Finalizers, with upstream's values: objects created by metal3's ip-address-manager carry them,
// so keeping the same strings lets metalwire take over a running installation and release
// those objects.
const (
	// IPPoolFinalizer keeps an IPPool while it still has addresses handed out.
	IPPoolFinalizer = "ippool.ipam.metal3.io"

	// IPClaimFinalizer is upstream's finalizer on IPClaims. metalwire does not add it (the
	// IPAddress's owner reference and the claim's delete event release the address), but
	// removes it from a claim being deleted, so claims made under upstream's controller go.
	IPClaimFinalizer = "ipclaim.ipam.metal3.io"

	// IPAddressFinalizer keeps an IPAddress until the pool has released it.
	IPAddressFinalizer = "ipaddress.ipam.metal3.io"

	// CAPIIPAddressClaimFinalizer is put on Cluster API IPAddressClaims served from an IPPool.
	CAPIIPAddressClaimFinalizer = "ipam.metal3.io/ipaddressclaim"

	// CAPIIPAddressFinalizer is put on Cluster API IPAddresses created from an IPPool.
	CAPIIPAddressFinalizer = "ipam.metal3.io/ipaddress"
)

// IPAddressAnnotation on an IPClaim (or a Cluster API IPAddressClaim) asks for one specific
// address from the pool instead of the next free one.
const IPAddressAnnotation = "ipAddress"

// Labels found on IPClaims and, copied from their claim, on IPAddresses. CAPM3 sets them when it
// creates a claim for a Metal3Data; upstream's IPAM copies the claim's labels to the IPAddress.
const (
	// ClusterNameLabel names the Cluster the claim's machine belongs to.
	ClusterNameLabel = clusterv1.ClusterNameLabel

	// DataNameLabel names the Metal3Data a claim was made for (set when claims are keyed by
	// BareMetalHost name, so that the claim outlives one Metal3Data).
	DataNameLabel = "infrastructure.cluster.x-k8s.io/data-name"

	// PoolNameLabel names the IPPool a claim was made on (set alongside DataNameLabel).
	PoolNameLabel = "infrastructure.cluster.x-k8s.io/pool-name"
)

// ReadyCondition is the one condition IPPools and IPClaims report: True when the pool can hand
// out addresses, or the claim holds one.
const ReadyCondition = "Ready"

// Reasons for an IPClaim's Ready condition.
const (
	// AllocatedReason: the claim holds an address (Ready=True).
	AllocatedReason = "Allocated"

	// PoolNotFoundReason: spec.pool names no IPPool in that namespace.
	PoolNotFoundReason = "PoolNotFound"

	// PoolExhaustedReason: every address of the pool is held; the claim is retried as soon as
	// one is released.
	PoolExhaustedReason = "PoolExhausted"

	// RequestedAddressInvalidReason: the ipAddress annotation is not an IP address.
	RequestedAddressInvalidReason = "RequestedAddressInvalid"

	// RequestedAddressUnavailableReason: the address asked for with the ipAddress annotation is
	// held by another claim, excluded, or outside the pool.
	RequestedAddressUnavailableReason = "RequestedAddressUnavailable"

	// PreAllocationConflictReason: the ipAddress annotation and the pool's preAllocations entry
	// for this claim name different addresses.
	PreAllocationConflictReason = "PreAllocationConflict"

	// PreAllocationOutOfRangeReason: the pool pre-allocates an address to this claim that is
	// not inside any of its entries.
	PreAllocationOutOfRangeReason = "PreAllocationOutOfRange"

	// AddressConflictReason: the address is already held through another kind of claim (an
	// IPClaim and a Cluster API IPAddressClaim never share an address).
	AddressConflictReason = "AddressConflict"

	// DeletingReason: the claim is being deleted and its address released.
	DeletingReason = "Deleting"

	// PoolNotReadyReason: the pool exists but hands out nothing now (its spec cannot be used,
	// its namePrefix is taken by an older pool, or it is being deleted); the pool's Ready
	// condition says why. The same string as Cluster API's reason for IPAddressClaims.
	PoolNotReadyReason = "PoolNotReady"

	// AllocationFailedReason: the address could not be written (an API error); the claim is
	// retried. The same string as Cluster API's reason for IPAddressClaims.
	AllocationFailedReason = "AllocationFailed"
)

// ReleasesAnnotation on an IPPool keeps, while reuseGracePeriod runs, which addresses were
// released and when, so that a restarted controller keeps them cooling. It is a JSON list,
// bounded in size, written by the IPPool controller only when the pool has a grace period.
const ReleasesAnnotation = "ipam.metalwire.io/releases"

// Reasons for an IPPool's Ready condition.
const (
	// PoolAvailableReason: the pool has free addresses (Ready=True).
	PoolAvailableReason = "Available"

	// PoolFullReason: the pool is valid but every address is held (Ready=True: claims wait for
	// a release rather than fail).
	PoolFullReason = "Full"

	// DuplicateNamePrefixReason: another IPPool in the namespace has the same namePrefix; both
	// would name their IPAddresses alike, so this pool hands out nothing until one is renamed.
	DuplicateNamePrefixReason = "DuplicateNamePrefix"

	// InvalidSpecReason: the spec passed admission but cannot be used (for example a
	// pre-allocation outside every entry); the message names the field.
	InvalidSpecReason = "InvalidSpec"

	// AddressesInUseReason: the pool is being deleted but still has addresses handed out; it
	// stays until they are released.
	AddressesInUseReason = "AddressesInUse"
)
