package networkdevice

import "k8s.io/client-go/kubernetes"

// WithoutManager readies a Reconciler whose Reconcile a test calls itself, with no manager
// (SetupWithManager is what does this otherwise).
func (r *Reconciler) WithoutManager(cs kubernetes.Interface) *Reconciler {
	r.init()
	r.secrets = newCredentialSecrets(cs)
	return r
}
