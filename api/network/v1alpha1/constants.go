package v1alpha1

import "strconv"

const (
	// SelectedForLabel on a NIC names the ClusterNetwork its host was selected for. The
	// Metal3Machine that claimed the host writes it (one writer per host, so selections never
	// conflict); the fabric controller derives status.selected from it.
	SelectedForLabel = "network.metalwire.io/selected-for"

	// ClusterNetworkFinalizer keeps a ClusterNetwork until its hosts' ports are reset and its
	// VLANs removed from the switches.
	ClusterNetworkFinalizer = "network.metalwire.io/clusternetwork"

	// VLANLockNetworkDeviceLabel, VLANLockClusterNetworkLabel and VLANLockNetworkAnnotation mark
	// the Lease that holds one VLAN id of a NetworkDevice (see VLANLockName).
	VLANLockNetworkDeviceLabel  = "network.metalwire.io/network-device"
	VLANLockClusterNetworkLabel = "network.metalwire.io/cluster-network"
	VLANLockNetworkAnnotation   = "network.metalwire.io/network"

	// GeneratedFromLabel marks a NIC object metalwire made from a BareMetalHost's switch data
	// (value: baremetalhost). A NIC of the host without it is hand-written and always wins.
	GeneratedFromLabel = "network.metalwire.io/generated-from"

	// DryRunAnnotation "true" on a NetworkDevice puts the changes each switch would get in
	// status.switches[].plannedChanges and sends nothing.
	DryRunAnnotation = "network.metalwire.io/dry-run"
)

// Condition types and reasons.
const (
	ConditionReady         = "Ready"
	ConditionVLANsAssigned = "VLANsAssigned"
	ConditionNICsValid     = "NICsValid"
	// ConditionLinkAggregationValid says whether every host's bonded cards can be bonded: on one
	// switch, or on a declared MLAG pair of switch OSes that have multi-chassis LAG.
	ConditionLinkAggregationValid = "LinkAggregationValid"
	// ConditionPortPoliciesValid says whether every host's switches can apply what its networks
	// ask of their ports (an acl, portStatus down).
	ConditionPortPoliciesValid = "PortPoliciesValid"
	ConditionReachable         = "Reachable"
	ConditionHostKeyTrusted    = "HostKeyTrusted"
	ConditionDrifted           = "Drifted"
	ConditionDryRun            = "DryRun"
	// ConditionAttachmentsApplied says whether the HostNetworkAttachments of claimed hosts are
	// on their ports (set once any host names one).
	ConditionAttachmentsApplied = "AttachmentsApplied"

	ReasonAssigned              = "Assigned"
	ReasonVLANRangeExhausted    = "VLANRangeExhausted"
	ReasonVLANTaken             = "VLANTaken"
	ReasonNetworkDeviceNotFound = "NetworkDeviceNotFound"
	ReasonNICMiscabled          = "NICMiscabled"
	ReasonLAGRefused            = "LAGRefused"
	ReasonPortPolicyRefused     = "PortPolicyRefused"
	ReasonValid                 = "Valid"
	ReasonHostsConfiguring      = "HostsConfiguring"
	ReasonHostsFailed           = "HostsFailed"
	ReasonAllReady              = "AllReady"
	ReasonDeleting              = "Deleting"
	ReasonReachable             = "Reachable"
	ReasonUnreachable           = "Unreachable"
	ReasonCredentialsMissing    = "CredentialsMissing"
	ReasonUnsupportedNetworkOS  = "UnsupportedNetworkOS"
	ReasonHostKeyUnknown        = "HostKeyUnknown"
	ReasonHostKeyTrusted        = "HostKeyTrusted"
	ReasonNoDrift               = "NoDrift"
	ReasonDriftRepaired         = "DriftRepaired"
	ReasonDriftReported         = "DriftReported"
	ReasonChangesPlanned        = "ChangesPlanned"
	ReasonChangesSent           = "ChangesSent"
	ReasonAttachmentsApplied    = "AttachmentsApplied"
	ReasonAttachmentsNotApplied = "AttachmentsNotApplied"
	ReasonClusterNetworkWins    = "ClusterNetworkWins"
)

// HostsNetworkConfigured: whether the hosts behind the configured ports reported their own side of
// the network configured (set only for switches that hear from hosts: equinix-metal, from the
// devices' events), and its reasons.
const (
	ConditionHostsNetworkConfigured = "HostsNetworkConfigured"

	ReasonHostsNetworkConfigured  = "HostsNetworkConfigured"
	ReasonHostsNetworkConfiguring = "HostsNetworkConfiguring"
	ReasonHostsNetworkFailed      = "HostsNetworkFailed"
)

// VLANLockName is the name of the Lease that holds VLAN id on a NetworkDevice: one name per
// (device, id), so the API server refuses a second holder.
func VLANLockName(networkDevice string, vlan int) string {
	return "vlan-" + networkDevice + "-" + strconv.Itoa(vlan)
}
