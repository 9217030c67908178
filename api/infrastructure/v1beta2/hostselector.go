package v1beta2

import (
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// HostSelector limits the BareMetalHosts a Metal3Machine may claim to those whose labels match.
// An empty selector matches every host. Every matchLabels entry and every matchExpressions
// entry must hold (they are ANDed).
//
// The CRD refuses what Selector would refuse, with the same messages, with one exception: the
// characters of matchLabels values are checked only by Selector, because a CEL regex over map
// values of unknown length exceeds the API server's cost budget.
type HostSelector struct {
	// MatchLabels are label key/value pairs a chosen BareMetalHost must carry exactly.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule=`self.all(k, size(k) <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))`,message=`every key must be a label key such as rack or example.com/rack: an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	// +kubebuilder:validation:XValidation:rule=`self.all(k, size(self[k]) <= 63)`,message=`every value must be a label value of at most 63 characters`
	MatchLabels map[string]string `json:"matchLabels,omitzero"`

	// MatchExpressions are label requirements a chosen BareMetalHost must meet.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MatchExpressions []HostSelectorRequirement `json:"matchExpressions,omitzero"`
}

// HostSelectorOperator relates a label key to its values. It accepts the operators of
// k8s.io/apimachinery/pkg/selection as upstream CAPM3 does, and the long forms of
// metav1.LabelSelector so that selectors copied from other objects work too.
// +kubebuilder:validation:Enum="!";"=";"==";in;"!=";notin;exists;gt;lt;In;NotIn;Exists;DoesNotExist
type HostSelectorOperator string

// The host selector operators.
const (
	// HostSelectorOpDoesNotExist ("!"): the host has no label with the key. No values.
	HostSelectorOpDoesNotExist HostSelectorOperator = "!"
	// HostSelectorOpEquals ("="): the label equals the one value.
	HostSelectorOpEquals HostSelectorOperator = "="
	// HostSelectorOpDoubleEquals ("=="): the same as "=".
	HostSelectorOpDoubleEquals HostSelectorOperator = "=="
	// HostSelectorOpIn ("in"): the label is one of the values (at least one).
	HostSelectorOpIn HostSelectorOperator = "in"
	// HostSelectorOpNotEquals ("!="): the label is absent or differs from the one value.
	HostSelectorOpNotEquals HostSelectorOperator = "!="
	// HostSelectorOpNotIn ("notin"): the label is absent or none of the values (at least one).
	HostSelectorOpNotIn HostSelectorOperator = "notin"
	// HostSelectorOpExists ("exists"): the host has a label with the key. No values.
	HostSelectorOpExists HostSelectorOperator = "exists"
	// HostSelectorOpGreaterThan ("gt"): the label is an integer greater than the one integer value.
	HostSelectorOpGreaterThan HostSelectorOperator = "gt"
	// HostSelectorOpLessThan ("lt"): the label is an integer less than the one integer value.
	HostSelectorOpLessThan HostSelectorOperator = "lt"

	// HostSelectorOpInLong ("In") is the metav1.LabelSelector spelling of "in".
	HostSelectorOpInLong HostSelectorOperator = "In"
	// HostSelectorOpNotInLong ("NotIn") is the metav1.LabelSelector spelling of "notin".
	HostSelectorOpNotInLong HostSelectorOperator = "NotIn"
	// HostSelectorOpExistsLong ("Exists") is the metav1.LabelSelector spelling of "exists".
	HostSelectorOpExistsLong HostSelectorOperator = "Exists"
	// HostSelectorOpDoesNotExistLong ("DoesNotExist") is the metav1.LabelSelector spelling of "!".
	HostSelectorOpDoesNotExistLong HostSelectorOperator = "DoesNotExist"
)

// hostSelectorOperators maps every accepted spelling to the labels package's operator.
var hostSelectorOperators = map[HostSelectorOperator]selection.Operator{
	HostSelectorOpDoesNotExist:     selection.DoesNotExist,
	HostSelectorOpEquals:           selection.Equals,
	HostSelectorOpDoubleEquals:     selection.DoubleEquals,
	HostSelectorOpIn:               selection.In,
	HostSelectorOpNotEquals:        selection.NotEquals,
	HostSelectorOpNotIn:            selection.NotIn,
	HostSelectorOpExists:           selection.Exists,
	HostSelectorOpGreaterThan:      selection.GreaterThan,
	HostSelectorOpLessThan:         selection.LessThan,
	HostSelectorOpInLong:           selection.In,
	HostSelectorOpNotInLong:        selection.NotIn,
	HostSelectorOpExistsLong:       selection.Exists,
	HostSelectorOpDoesNotExistLong: selection.DoesNotExist,
}

// HostSelectorRequirement is one label requirement: key, operator and the values the operator
// needs.
//
// The CEL rules below repeat the checks of HostSelector.Selector; keep their messages in step.
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['gt', 'lt']) || (has(self.values) && size(self.values) == 1 && self.values[0].matches('^[0-9]{1,18}$'))`,messageExpression=`'operator "' + self.operator + '" needs exactly one integer value, such as values: ["8"]'`,fieldPath=`.values`,reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['in', 'notin', 'In', 'NotIn']) || (has(self.values) && size(self.values) > 0)`,messageExpression=`'operator "' + self.operator + '" needs at least one value; list them in values, or use exists to require only the key'`,fieldPath=`.values`,reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['exists', '!', 'Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0`,messageExpression=`'operator "' + self.operator + '" takes no values; remove values, or use "=" or "in" to match a value'`,fieldPath=`.values`,reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['=', '==', '!=']) || (has(self.values) && size(self.values) == 1)`,messageExpression=`'operator "' + self.operator + '" needs exactly one value; use "in" or "notin" for several'`,fieldPath=`.values`,reason=FieldValueInvalid
type HostSelectorRequirement struct {
	// Key is the label key, such as rack or example.com/rack.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule=`self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$')`,message=`must be a label key such as rack or example.com/rack: an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	Key string `json:"key"`

	// Operator relates the key to the values: "!", "=", "==", "in", "!=", "notin", "exists",
	// "gt", "lt", or the long forms "In", "NotIn", "Exists", "DoesNotExist".
	Operator HostSelectorOperator `json:"operator"`

	// Values for the operator: exactly one for "=", "==", "!=", "gt" and "lt" (digits only for
	// the last two), at least one for "in" and "notin", none for "exists" and "!".
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.all(v, v.matches('^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$'))`,message=`every value must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	Values []string `json:"values,omitzero"`
}

// Selector turns the host selector into a labels.Selector to list or match BareMetalHosts.
// An empty selector matches every host. The error names the offending entry, e.g.
// `hostSelector.matchExpressions[1].values: Invalid value: ...: operator "gt" needs exactly one
// integer value`.
func (s HostSelector) Selector() (labels.Selector, error) {
	root := field.NewPath("hostSelector")
	var errs []error
	reqs := make([]labels.Requirement, 0, len(s.MatchLabels)+len(s.MatchExpressions))

	// Sorted, so that neither the selector's String() nor the error order depends on map order.
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		req, err := labels.NewRequirement(k, selection.Equals, []string{s.MatchLabels[k]},
			field.WithPath(root.Child("matchLabels").Key(k)))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reqs = append(reqs, *req)
	}

	for i, expr := range s.MatchExpressions {
		req, err := expr.requirement(root.Child("matchExpressions").Index(i))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reqs = append(reqs, *req)
	}

	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	return labels.NewSelector().Add(reqs...), nil
}

// requirement converts one expression. It checks the value count itself first, so that the
// message says what this operator needs (the labels package speaks of 'Gt' and "exact-match").
func (r HostSelectorRequirement) requirement(path *field.Path) (*labels.Requirement, error) {
	op, ok := hostSelectorOperators[r.Operator]
	if !ok {
		return nil, field.NotSupported(path.Child("operator"), r.Operator, supportedHostSelectorOperators())
	}
	invalid := func(format string) error {
		return field.Invalid(path.Child("values"), r.Values, fmt.Sprintf(format, r.Operator))
	}
	n := len(r.Values)
	switch op {
	case selection.GreaterThan, selection.LessThan:
		if n != 1 || !isInteger(r.Values[0]) {
			return nil, invalid(`operator %q needs exactly one integer value, such as values: ["8"]`)
		}
	case selection.In, selection.NotIn:
		if n == 0 {
			return nil, invalid(`operator %q needs at least one value; list them in values, or use exists to require only the key`)
		}
	case selection.Exists, selection.DoesNotExist:
		if n != 0 {
			return nil, invalid(`operator %q takes no values; remove values, or use "=" or "in" to match a value`)
		}
	case selection.Equals, selection.DoubleEquals, selection.NotEquals:
		if n != 1 {
			return nil, invalid(`operator %q needs exactly one value; use "in" or "notin" for several`)
		}
	}
	// Key and value syntax are the labels package's to judge; its errors carry the path.
	return labels.NewRequirement(r.Key, op, r.Values, field.WithPath(path))
}

// isInteger accepts what the CRD rule accepts: 1 to 18 digits. A sign is no use, since a label
// value must start with a letter or digit, and 18 digits always fit the int64 labels parses.
func isInteger(s string) bool {
	if len(s) == 0 || len(s) > 18 {
		return false
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil // ParseUint refuses signs too
}

func supportedHostSelectorOperators() []string {
	ops := make([]string, 0, len(hostSelectorOperators))
	for op := range hostSelectorOperators {
		ops = append(ops, string(op))
	}
	slices.Sort(ops)
	return ops
}
