package render

import (
	"errors"
	"fmt"
)

// Reason says what kind of problem an Error is, so a controller can choose a condition reason
// and whether to retry.
type Reason string

const (
	// ReasonInvalid: the template (or a value it reads) is wrong; only a change to it helps.
	ReasonInvalid Reason = "InvalidTemplate"
	// ReasonWaitingForPool: an address from a pool is not allocated yet; retry once it is.
	ReasonWaitingForPool Reason = "WaitingForAddress"
	// ReasonHostNotInspected: the template names a NIC and the host has no inspected NICs yet;
	// retry after inspection.
	ReasonHostNotInspected Reason = "WaitingForInspection"
	// ReasonObjectUnavailable: the template reads the Machine or Metal3Machine, which do not
	// exist for this rendering (pre-provisioning).
	ReasonObjectUnavailable Reason = "ObjectUnavailable"
	// ReasonVLANUnresolved: a VLAN link takes its id from a ClusterNetwork network (vlanIDFrom)
	// and the facts hold no id for it.
	ReasonVLANUnresolved Reason = "VLANUnresolved"
	// ReasonBondUnresolved: a bond takes its members from a ClusterNetwork network (bondFrom)
	// and the facts hold no bond for it.
	ReasonBondUnresolved Reason = "BondUnresolved"
)

// Error is a rendering failure: the template field at fault and what to do about it.
type Error struct {
	// Field is the template path, such as networkData.links.vlans[1].vlanLink.
	Field string
	// Reason classifies the failure.
	Reason Reason
	// Detail says what is wrong and how to fix it.
	Detail string
	// Pool is the pool waited for, with ReasonWaitingForPool.
	Pool PoolRef
	// Object is the object missing (machine, metal3machine), with ReasonObjectUnavailable.
	Object string
	// VLAN is the ClusterNetwork network whose id (or bond, with ReasonBondUnresolved) is
	// missing, with ReasonVLANUnresolved.
	VLAN VLANRef
}

func (e *Error) Error() string { return e.Field + ": " + e.Detail }

// IsRetryable reports whether err may go away without changing the template: an address not yet
// allocated, or a host not yet inspected.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Reason == ReasonWaitingForPool || e.Reason == ReasonHostNotInspected)
}

// IsWaitingForPool reports whether err is an address not yet allocated, and from which pool.
func IsWaitingForPool(err error) (PoolRef, bool) {
	var e *Error
	if errors.As(err, &e) && e.Reason == ReasonWaitingForPool {
		return e.Pool, true
	}
	return PoolRef{}, false
}

func invalid(field, format string, args ...any) *Error {
	return &Error{Field: field, Reason: ReasonInvalid, Detail: fmt.Sprintf(format, args...)}
}

// explain prefixes the detail of a rendering error with where the bad value came from.
func explain(err error, format string, args ...any) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Detail = fmt.Sprintf(format, args...) + c.Detail
		return &c
	}
	return err
}
