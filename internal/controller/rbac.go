package controller

// The manager's own permissions, beside those each reconciler's package declares.
//
// Leader election: a Lease in the manager's namespace ("system" is rewritten by kustomize to the
// namespace the provider is installed in), and the events it records about it.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",namespace=system,resources=events,verbs=create;patch
//
// The metrics endpoint authenticates its clients' tokens and asks the API server whether they
// may read /metrics (controller-runtime's filters.WithAuthenticationAndAuthorization).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
//
// Owner references with blockOwnerDeletion need update on the owner's finalizers subresource
// where the OwnerReferencesPermissionEnforcement admission plugin is on: Metal3DataClaims owned
// by Metal3Machines, Metal3Data by Metal3DataClaims, address claims and Secrets by Metal3Data.
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines/finalizers;metal3dataclaims/finalizers;metal3datas/finalizers,verbs=update
