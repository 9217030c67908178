// Package metal3remediation reconciles Metal3Remediations: it remediates an unhealthy Machine by
// power-cycling its BareMetalHost through BMO's reboot annotation, deletes the Machine's Node
// while the host is off (keeping its labels and annotations to put back once the kubelet
// re-registers it), retries up to spec.strategy.retryLimit times, and then marks the host
// unhealthy and hands the Machine back to Cluster API for deletion. The phases and the
// annotations are CAPM3's, so remediations started by CAPM3 carry on.
package metal3remediation
