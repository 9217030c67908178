package webhooks

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// ConvertibleKinds are the hubs (v1beta2) of every kind served in more than one version. A new
// kind served in v1beta1 too (Metal3Remediation, ...) is added here, with its Hub method in
// api/infrastructure/v1beta2/conversion.go and ConvertTo/ConvertFrom in api/infrastructure/v1beta1.
func ConvertibleKinds() []client.Object {
	return []client.Object{
		&infrav1.Metal3Cluster{},
		&infrav1.Metal3ClusterTemplate{},
		&infrav1.Metal3Machine{},
		&infrav1.Metal3MachineTemplate{},
		&infrav1.Metal3DataTemplate{},
		&infrav1.Metal3Data{},
		&infrav1.Metal3DataClaim{},
		&infrav1.Metal3Remediation{},
		&infrav1.Metal3RemediationTemplate{},
	}
}

// SetupConversion serves the conversion webhook (/convert) of every ConvertibleKinds kind on
// mgr's webhook server. mgr's scheme must hold both versions (internal/scheme.New does).
func SetupConversion(mgr ctrl.Manager) error {
	for _, obj := range ConvertibleKinds() {
		if err := ctrl.NewWebhookManagedBy(mgr, obj).Complete(); err != nil {
			return fmt.Errorf("conversion webhook of %T: %w", obj, err)
		}
	}
	return nil
}
