package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AllocationStrategy says which free address a pool hands out next.
type AllocationStrategy string

const (
	// AllocationStrategySequential hands out the lowest free address (the default).
	AllocationStrategySequential AllocationStrategy = "sequential"
	// AllocationStrategyRandom hands out a free address chosen at random, so a released address
	// is unlikely to be reused soon.
	AllocationStrategyRandom AllocationStrategy = "random"
)

// The rules below refuse, at admission, entries the allocator could not use. Every rule skips
// values another rule already refuses (a malformed address, mixed families), so one mistake
// gives one message.
//
// Kubernetes CEL has no ordering for IP addresses, so the "end must not be before start" rule
// compares keys built from the text: an IPv4 address becomes its 32-bit number; an IPv6 address
// is lowercased, its "::" expanded to the missing zero groups, and each of its eight groups
// padded to four hex digits, so that string order is address order. The keys are built with
// indexOf/substring rather than split(), because the API server cannot bound the cost of rules
// over split()'s results and refuses them. [x].map(name, ...)[0] binds a name to a value. The
// rule (and the excludedAddresses one) is built by celrules_test.go, which fails if they drift.
// IPv6 written with a dotted IPv4 tail is not ordered (the key does not read that form).
//
// +kubebuilder:validation:XValidation:rule="has(self.start) || has(self.subnet)",message="a pool entry needs start or subnet: set start (and end) for a range, or subnet to hand out the whole network"
// +kubebuilder:validation:XValidation:rule="[(has(self.start) && isIP(self.start) ? [ip(self.start).family()] : []) + (has(self.end) && isIP(self.end) ? [ip(self.end).family()] : []) + (has(self.subnet) && isCIDR(self.subnet) ? [cidr(self.subnet).ip().family()] : []) + (has(self.gateway) && isIP(self.gateway) ? [ip(self.gateway).family()] : [])].all(f, f.all(x, x == f[0]))",message="start, end, subnet and gateway must all be IPv4 or all IPv6; put each address family in its own pool entry"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || !has(self.end) || !isIP(self.start) || !isIP(self.end) || ip(self.start).family() != ip(self.end).family() || (ip(self.start).family() == 4 ? [self.start.indexOf('.')].map(d1, [self.start.indexOf('.', d1 + 1)].map(d2, [self.start.indexOf('.', d2 + 1)].map(d3, int(self.start.substring(0, d1)) * 16777216 + int(self.start.substring(d1 + 1, d2)) * 65536 + int(self.start.substring(d2 + 1, d3)) * 256 + int(self.start.substring(d3 + 1)))[0])[0])[0] <= [self.end.indexOf('.')].map(d1, [self.end.indexOf('.', d1 + 1)].map(d2, [self.end.indexOf('.', d2 + 1)].map(d3, int(self.end.substring(0, d1)) * 16777216 + int(self.end.substring(d1 + 1, d2)) * 65536 + int(self.end.substring(d2 + 1, d3)) * 256 + int(self.end.substring(d3 + 1)))[0])[0])[0] : (self.start.contains('.') || self.end.contains('.') || [self.start.lowerAscii().replace('::', ':z:')].map(a, [a.startsWith(':') ? a.substring(1) : a].map(b, [b.endsWith(':') ? b.substring(0, size(b) - 1) : b].map(c, [c.contains('z') ? c.replace('z', ['0', '0:0', '0:0:0', '0:0:0:0', '0:0:0:0:0', '0:0:0:0:0:0', '0:0:0:0:0:0:0', '0:0:0:0:0:0:0:0'][8 - size(c.split(':'))]) : c].map(e, [e.indexOf(':')].map(c1, [e.indexOf(':', c1 + 1)].map(c2, [e.indexOf(':', c2 + 1)].map(c3, [e.indexOf(':', c3 + 1)].map(c4, [e.indexOf(':', c4 + 1)].map(c5, [e.indexOf(':', c5 + 1)].map(c6, [e.indexOf(':', c6 + 1)].map(c7, ('000' + e.substring(0, c1)).substring(size(e.substring(0, c1)) - 1) + ('000' + e.substring(c1 + 1, c2)).substring(size(e.substring(c1 + 1, c2)) - 1) + ('000' + e.substring(c2 + 1, c3)).substring(size(e.substring(c2 + 1, c3)) - 1) + ('000' + e.substring(c3 + 1, c4)).substring(size(e.substring(c3 + 1, c4)) - 1) + ('000' + e.substring(c4 + 1, c5)).substring(size(e.substring(c4 + 1, c5)) - 1) + ('000' + e.substring(c5 + 1, c6)).substring(size(e.substring(c5 + 1, c6)) - 1) + ('000' + e.substring(c6 + 1, c7)).substring(size(e.substring(c6 + 1, c7)) - 1) + ('000' + e.substring(c7 + 1)).substring(size(e.substring(c7 + 1)) - 1))[0])[0])[0])[0])[0])[0])[0])[0])[0])[0])[0] <= [self.end.lowerAscii().replace('::', ':z:')].map(a, [a.startsWith(':') ? a.substring(1) : a].map(b, [b.endsWith(':') ? b.substring(0, size(b) - 1) : b].map(c, [c.contains('z') ? c.replace('z', ['0', '0:0', '0:0:0', '0:0:0:0', '0:0:0:0:0', '0:0:0:0:0:0', '0:0:0:0:0:0:0', '0:0:0:0:0:0:0:0'][8 - size(c.split(':'))]) : c].map(e, [e.indexOf(':')].map(c1, [e.indexOf(':', c1 + 1)].map(c2, [e.indexOf(':', c2 + 1)].map(c3, [e.indexOf(':', c3 + 1)].map(c4, [e.indexOf(':', c4 + 1)].map(c5, [e.indexOf(':', c5 + 1)].map(c6, [e.indexOf(':', c6 + 1)].map(c7, ('000' + e.substring(0, c1)).substring(size(e.substring(0, c1)) - 1) + ('000' + e.substring(c1 + 1, c2)).substring(size(e.substring(c1 + 1, c2)) - 1) + ('000' + e.substring(c2 + 1, c3)).substring(size(e.substring(c2 + 1, c3)) - 1) + ('000' + e.substring(c3 + 1, c4)).substring(size(e.substring(c3 + 1, c4)) - 1) + ('000' + e.substring(c4 + 1, c5)).substring(size(e.substring(c4 + 1, c5)) - 1) + ('000' + e.substring(c5 + 1, c6)).substring(size(e.substring(c5 + 1, c6)) - 1) + ('000' + e.substring(c6 + 1, c7)).substring(size(e.substring(c6 + 1, c7)) - 1) + ('000' + e.substring(c7 + 1)).substring(size(e.substring(c7 + 1)) - 1))[0])[0])[0])[0])[0])[0])[0])[0])[0])[0])[0]))",message="end must not be before start; swap start and end",fieldPath=".end"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || !has(self.subnet) || !isIP(self.start) || !isCIDR(self.subnet) || ip(self.start).family() != cidr(self.subnet).ip().family() || cidr(self.subnet).containsIP(self.start)",message="start must be inside subnet; change start or widen subnet",fieldPath=".start"
// +kubebuilder:validation:XValidation:rule="!has(self.end) || !has(self.subnet) || !isIP(self.end) || !isCIDR(self.subnet) || ip(self.end).family() != cidr(self.subnet).ip().family() || cidr(self.subnet).containsIP(self.end)",message="end must be inside subnet; change end or widen subnet",fieldPath=".end"
// +kubebuilder:validation:XValidation:rule="!has(self.prefix) || self.prefix <= 32 || ((has(self.start) && isIP(self.start)) ? ip(self.start).family() : ((has(self.subnet) && isCIDR(self.subnet)) ? cidr(self.subnet).ip().family() : 0)) != 4",message="prefix must be between 0 and 32 for IPv4 addresses",fieldPath=".prefix"

// Pool is one range of addresses in an IPPool: start to end, or a whole subnet. Its prefix,
// gateway and dnsServers, when set, override the IPPool's top-level values for the addresses it
// hands out.
type Pool struct {
	// Start is the first address handed out. When unset, it is the first address after the
	// subnet's network address (192.168.0.1 for 192.168.0.0/24).
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="start must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10"
	// +optional
	Start *IPAddressStr `json:"start,omitempty"`

	// End is the last address handed out. When unset, the entry runs to the end of its subnet; an
	// entry given by subnet alone never hands out the subnet's last (broadcast) address.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="end must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10"
	// +optional
	End *IPAddressStr `json:"end,omitempty"`

	// Subnet is the network this entry's addresses belong to. It bounds start and end, and stands
	// in for them when they are unset.
	// +optional
	Subnet *IPSubnetStr `json:"subnet,omitempty"`

	// Prefix is the network mask length given with each address (0-32 for IPv4, 0-128 for IPv6).
	// Overrides the pool's top-level prefix.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix int `json:"prefix,omitempty"`

	// Gateway is the default gateway given with each address. Overrides the pool's top-level
	// gateway. Never handed out as an address.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="gateway must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10"
	// +optional
	Gateway *IPAddressStr `json:"gateway,omitempty"`

	// DNSServers are the DNS servers given with each address. Override the pool's top-level
	// dnsServers.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",message="each dnsServers entry must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10"
	// +optional
	DNSServers []IPAddressStr `json:"dnsServers,omitempty"`
}

// IPPoolSpec is the set of addresses an IPPool hands out and what it gives with them.
//
// +kubebuilder:validation:XValidation:rule="!has(self.prefix) || self.prefix <= 32 || ((!has(self.gateway) || !isIP(self.gateway) || ip(self.gateway).family() == 6) && (!has(self.pools) || self.pools.all(p, (has(p.prefix) && p.prefix != 0) || ((has(p.start) && isIP(p.start)) ? ip(p.start).family() : ((has(p.subnet) && isCIDR(p.subnet)) ? cidr(p.subnet).ip().family() : 0)) != 4)))",message="prefix must be between 0 and 32: it applies to IPv4 addresses (the gateway, or pool entries without their own prefix); lower it, or set prefix on each IPv6 pool entry instead",fieldPath=".prefix"
// +kubebuilder:validation:XValidation:rule="!has(self.gateway) || !isIP(self.gateway) || !has(self.pools) || self.pools.all(p, has(p.gateway) || ((has(p.start) && isIP(p.start)) ? ip(p.start).family() : ((has(p.subnet) && isCIDR(p.subnet)) ? cidr(p.subnet).ip().family() : 0)) == 0 || ((has(p.start) && isIP(p.start)) ? ip(p.start).family() : ((has(p.subnet) && isCIDR(p.subnet)) ? cidr(p.subnet).ip().family() : 0)) == ip(self.gateway).family())",message="gateway must be of the same address family as the pool entries that use it (those without their own gateway); set gateway on the entries of the other family",fieldPath=".gateway"
type IPPoolSpec struct {
	// ClusterName is the name of the Cluster this pool belongs to.
	// +optional
	ClusterName *string `json:"clusterName,omitempty"`

	// Pools are the address ranges handed out, tried in order.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Pools []Pool `json:"pools,omitempty"`

	// AllocationStrategy says which free address is handed out next: "sequential" (the lowest
	// free address) or "random".
	// +kubebuilder:validation:Enum=sequential;random
	// +kubebuilder:default=sequential
	// +optional
	AllocationStrategy AllocationStrategy `json:"allocationStrategy,omitempty"`

	// PreAllocations maps a claim name to the address that claim must get. Keyed by
	// <BareMetalHost name>-<pool name>, it gives a host the same address in pre-provisioning,
	// provisioning and after re-provisioning.
	// +kubebuilder:validation:MaxProperties=2000
	// +kubebuilder:validation:XValidation:rule="self.all(claim, isIP(self[claim]))",message="every preAllocations value must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10"
	// +kubebuilder:validation:XValidation:rule="self.map(claim, isIP(self[claim]) ? string(ip(self[claim])) : self[claim]).distinct().size() == size(self)",message="preAllocations gives one address to two claims; give each claim its own address"
	// +optional
	PreAllocations map[string]IPAddressStr `json:"preAllocations,omitempty"`

	// Prefix is the network mask length given with each address, unless its pool entry sets one
	// (0-32 for IPv4, 0-128 for IPv6).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix int `json:"prefix,omitempty"`

	// Gateway is the default gateway given with each address, unless its pool entry sets one.
	// Never handed out as an address.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="gateway must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10"
	// +optional
	Gateway *IPAddressStr `json:"gateway,omitempty"`

	// DNSServers are the DNS servers given with each address, unless its pool entry sets them.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",message="each dnsServers entry must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10"
	// +optional
	DNSServers []IPAddressStr `json:"dnsServers,omitempty"`

	// NamePrefix starts the name of every IPAddress this pool creates; see IPAddressName. It
	// cannot change: existing IPAddresses would no longer be found by name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="namePrefix must be lowercase letters, digits and '-', starting and ending with a letter or digit, because it starts IPAddress object names"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="namePrefix is immutable: existing IPAddresses are named after it; create a new IPPool to use another prefix"
	NamePrefix string `json:"namePrefix"`

	// ExcludedAddresses are never handed out: each entry is an address (192.168.0.7), an
	// inclusive range with the lower address first (192.168.0.20-192.168.0.29) or a network in
	// CIDR notation (192.168.0.64/28). metalwire addition.
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=79
	// +kubebuilder:validation:items:XValidation:rule="isIP(self) || isCIDR(self) || (self.contains('-') && [self.substring(0, self.indexOf('-'))].map(lo, [self.substring(self.indexOf('-') + 1)].map(hi, isIP(lo) && isIP(hi) && ip(lo).family() == ip(hi).family() && (ip(lo).family() == 4 ? [lo.indexOf('.')].map(d1, [lo.indexOf('.', d1 + 1)].map(d2, [lo.indexOf('.', d2 + 1)].map(d3, int(lo.substring(0, d1)) * 16777216 + int(lo.substring(d1 + 1, d2)) * 65536 + int(lo.substring(d2 + 1, d3)) * 256 + int(lo.substring(d3 + 1)))[0])[0])[0] <= [hi.indexOf('.')].map(d1, [hi.indexOf('.', d1 + 1)].map(d2, [hi.indexOf('.', d2 + 1)].map(d3, int(hi.substring(0, d1)) * 16777216 + int(hi.substring(d1 + 1, d2)) * 65536 + int(hi.substring(d2 + 1, d3)) * 256 + int(hi.substring(d3 + 1)))[0])[0])[0] : (lo.contains('.') || hi.contains('.') || [lo.lowerAscii().replace('::', ':z:')].map(a, [a.startsWith(':') ? a.substring(1) : a].map(b, [b.endsWith(':') ? b.substring(0, size(b) - 1) : b].map(c, [c.contains('z') ? c.replace('z', ['0', '0:0', '0:0:0', '0:0:0:0', '0:0:0:0:0', '0:0:0:0:0:0', '0:0:0:0:0:0:0', '0:0:0:0:0:0:0:0'][8 - size(c.split(':'))]) : c].map(e, [e.indexOf(':')].map(c1, [e.indexOf(':', c1 + 1)].map(c2, [e.indexOf(':', c2 + 1)].map(c3, [e.indexOf(':', c3 + 1)].map(c4, [e.indexOf(':', c4 + 1)].map(c5, [e.indexOf(':', c5 + 1)].map(c6, [e.indexOf(':', c6 + 1)].map(c7, ('000' + e.substring(0, c1)).substring(size(e.substring(0, c1)) - 1) + ('000' + e.substring(c1 + 1, c2)).substring(size(e.substring(c1 + 1, c2)) - 1) + ('000' + e.substring(c2 + 1, c3)).substring(size(e.substring(c2 + 1, c3)) - 1) + ('000' + e.substring(c3 + 1, c4)).substring(size(e.substring(c3 + 1, c4)) - 1) + ('000' + e.substring(c4 + 1, c5)).substring(size(e.substring(c4 + 1, c5)) - 1) + ('000' + e.substring(c5 + 1, c6)).substring(size(e.substring(c5 + 1, c6)) - 1) + ('000' + e.substring(c6 + 1, c7)).substring(size(e.substring(c6 + 1, c7)) - 1) + ('000' + e.substring(c7 + 1)).substring(size(e.substring(c7 + 1)) - 1))[0])[0])[0])[0])[0])[0])[0])[0])[0])[0])[0] <= [hi.lowerAscii().replace('::', ':z:')].map(a, [a.startsWith(':') ? a.substring(1) : a].map(b, [b.endsWith(':') ? b.substring(0, size(b) - 1) : b].map(c, [c.contains('z') ? c.replace('z', ['0', '0:0', '0:0:0', '0:0:0:0', '0:0:0:0:0', '0:0:0:0:0:0', '0:0:0:0:0:0:0', '0:0:0:0:0:0:0:0'][8 - size(c.split(':'))]) : c].map(e, [e.indexOf(':')].map(c1, [e.indexOf(':', c1 + 1)].map(c2, [e.indexOf(':', c2 + 1)].map(c3, [e.indexOf(':', c3 + 1)].map(c4, [e.indexOf(':', c4 + 1)].map(c5, [e.indexOf(':', c5 + 1)].map(c6, [e.indexOf(':', c6 + 1)].map(c7, ('000' + e.substring(0, c1)).substring(size(e.substring(0, c1)) - 1) + ('000' + e.substring(c1 + 1, c2)).substring(size(e.substring(c1 + 1, c2)) - 1) + ('000' + e.substring(c2 + 1, c3)).substring(size(e.substring(c2 + 1, c3)) - 1) + ('000' + e.substring(c3 + 1, c4)).substring(size(e.substring(c3 + 1, c4)) - 1) + ('000' + e.substring(c4 + 1, c5)).substring(size(e.substring(c4 + 1, c5)) - 1) + ('000' + e.substring(c5 + 1, c6)).substring(size(e.substring(c5 + 1, c6)) - 1) + ('000' + e.substring(c6 + 1, c7)).substring(size(e.substring(c6 + 1, c7)) - 1) + ('000' + e.substring(c7 + 1)).substring(size(e.substring(c7 + 1)) - 1))[0])[0])[0])[0])[0])[0])[0])[0])[0])[0])[0])))[0])[0])",message="each excludedAddresses entry must be an address (192.168.0.7), a range of one address family with the lower address first (192.168.0.20-192.168.0.29) or a CIDR (192.168.0.64/28)"
	// +optional
	ExcludedAddresses []string `json:"excludedAddresses,omitempty"`

	// ReuseGracePeriod is how long a released address rests before it is handed out again, so
	// that stale ARP and neighbour caches on the network expire first. Unset or 0 reuses at once.
	// metalwire addition.
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+)$')",message="reuseGracePeriod must be a non-negative duration such as 30s, 5m or 1h30m"
	// +optional
	ReuseGracePeriod *metav1.Duration `json:"reuseGracePeriod,omitempty"`
}

// IPPoolStatus is what the pool has handed out.
type IPPoolStatus struct {
	// LastUpdated is when the allocations last changed.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// Allocations maps each claim name to the address it holds. Atomic: the controller owns it
	// whole, so managedFields has one entry for it, not one per address (at 5,000 addresses that
	// was about as large as the map itself, on every status write).
	// +mapType=atomic
	// +optional
	Allocations map[string]IPAddressStr `json:"indexes,omitempty"`

	// Total is how many addresses the pool can hand out: its entries' addresses minus excluded
	// ones, gateways, and the network and broadcast addresses of subnet-only entries. Unset when
	// not yet computed. metalwire addition.
	// +optional
	Total *int64 `json:"total,omitempty"`

	// Used is how many of those addresses are held by a claim, pre-allocated or resting in their
	// reuse grace period. metalwire addition.
	// +optional
	Used *int64 `json:"used,omitempty"`

	// Free is how many addresses can be handed out now (total - used). metalwire addition.
	// +optional
	Free *int64 `json:"free,omitempty"`

	// OutOfRange is how many held addresses are no longer inside the pool's entries, after the
	// entries were edited. They stay allocated until released. metalwire addition.
	// +optional
	OutOfRange *int64 `json:"outOfRange,omitempty"`

	// Conditions say whether the pool can hand out addresses (Ready) and why not.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// IPPool is a set of IP addresses handed out to IPClaims (and Cluster API IPAddressClaims) as
// IPAddress objects.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ippools,scope=Namespaced,categories=cluster-api,shortName=ipp;ippool;m3ipp;m3ippool;m3ippools;metal3ipp;metal3ippool;metal3ippools
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster this pool belongs to"
// +kubebuilder:printcolumn:name="Prefix",type="string",JSONPath=".spec.namePrefix",description="Prefix of the IPAddress names"
// +kubebuilder:printcolumn:name="Total",type="integer",JSONPath=".status.total",description="Addresses the pool can hand out"
// +kubebuilder:printcolumn:name="Used",type="integer",JSONPath=".status.used",description="Addresses held"
// +kubebuilder:printcolumn:name="Free",type="integer",JSONPath=".status.free",description="Addresses available now"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the pool can hand out addresses"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type IPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   IPPoolSpec   `json:"spec"`
	Status IPPoolStatus `json:"status,omitempty"`
}

// IPPoolList is a list of IPPools.
//
// +kubebuilder:object:root=true
type IPPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPPool `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &IPPool{}, &IPPoolList{})
}
