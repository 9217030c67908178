package v1beta2

// The kinds below are the hub of conversion: v1beta2 is stored, and every other served version
// (CAPM3's v1beta1, in api/infrastructure/v1beta1) converts to and from it. A kind served in
// v1beta2 only (Metal3PreprovisioningDataTemplate) needs no Hub method.

// Hub marks Metal3Cluster v1beta2 as the conversion hub.
func (*Metal3Cluster) Hub() {}

// Hub marks Metal3ClusterTemplate v1beta2 as the conversion hub.
func (*Metal3ClusterTemplate) Hub() {}

// Hub marks Metal3Machine v1beta2 as the conversion hub.
func (*Metal3Machine) Hub() {}

// Hub marks Metal3MachineTemplate v1beta2 as the conversion hub.
func (*Metal3MachineTemplate) Hub() {}

// Hub marks Metal3DataTemplate v1beta2 as the conversion hub.
func (*Metal3DataTemplate) Hub() {}

// Hub marks Metal3Data v1beta2 as the conversion hub.
func (*Metal3Data) Hub() {}

// Hub marks Metal3DataClaim v1beta2 as the conversion hub.
func (*Metal3DataClaim) Hub() {}

// Hub marks Metal3Remediation v1beta2 as the conversion hub.
func (*Metal3Remediation) Hub() {}

// Hub marks Metal3RemediationTemplate v1beta2 as the conversion hub.
func (*Metal3RemediationTemplate) Hub() {}
