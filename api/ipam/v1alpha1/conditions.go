package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GetConditions and SetConditions let Cluster API's util/conditions read and write the Ready
// condition of pools and claims.

// GetConditions returns the pool's conditions.
func (p *IPPool) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the pool's conditions.
func (p *IPPool) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// GetConditions returns the claim's conditions.
func (c *IPClaim) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the claim's conditions.
func (c *IPClaim) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }
