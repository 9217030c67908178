// Package metal3remediation reconciles Metal3Remediations: it remediates an unhealthy Machine by
// power-cycling its BareMetalHost through BMO's reboot annotation. While the host is off the
// Machine's Node is either tainted node.kubernetes.io/out-of-service until its pods and volumes
// are gone (the taint removed once the host is on again), or deleted (its labels and
// annotations kept to put back once the kubelet re-registers it): NodeMode chooses, by default
// as upstream does, by the management cluster's Kubernetes version. It retries up to
// spec.strategy.retryLimit times, and then marks the host unhealthy and hands the Machine back
// to Cluster API for deletion. The phases and the annotations are CAPM3's, so remediations
// started by CAPM3 carry on.
package metal3remediation
