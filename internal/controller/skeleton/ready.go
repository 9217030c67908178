package skeleton

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Ready says how a kind's Ready condition is summarised from the conditions its Normal phase
// sets, with Cluster API's conditions.NewSummaryCondition. The summary runs once, after Normal
// and before the patch. A Delete phase says itself why the object waits to go: what it waits
// for is none of Normal's conditions.
type Ready[T client.Object] struct {
	// Condition is the type summarised, usually "Ready".
	Condition string
	// From are the conditions summarised, in order: Ready is True when all are True; otherwise
	// it is False with the reason and message of the first that is not. A condition not set yet
	// is left out, but never lets Ready say True: while one is missing and the rest are True
	// (an object written by an older manager, whose first reconcile here stopped before setting
	// it), Ready is left as it is, as it is with none of them set.
	From []string
	// TrueReason is Ready's reason when all of From are True.
	TrueReason string
	// Reasons gives Ready's reason when the condition named is the first of From that is not
	// True (the message stays that condition's); a condition not named gives its own reason.
	Reasons map[string]string
	// Conditions gives the object's conditions, for a kind that is no conditions.Setter (one that
	// is would have Cluster API's patch helper write its conditions in a request of their own).
	// Nil: the object is a conditions.Setter.
	Conditions func(obj T) *[]metav1.Condition
}

// Summarise sets obj's Ready condition from the conditions From names. The skeleton calls it
// after Normal; a test of a kind's summary may call it on an object it built.
func (r *Ready[T]) Summarise(obj T) error {
	var getter conditions.Getter
	var set func(metav1.Condition)
	if r.Conditions != nil {
		conds := r.Conditions(obj)
		getter = conditionList(*conds)
		set = func(c metav1.Condition) {
			c.ObservedGeneration = obj.GetGeneration()
			meta.SetStatusCondition(conds, c)
		}
	} else {
		setter, ok := any(obj).(conditions.Setter)
		if !ok {
			return fmt.Errorf("%T has no conditions to summarise into %s", obj, r.Condition)
		}
		getter = setter
		set = func(c metav1.Condition) { conditions.Set(setter, c) }
	}
	present, missing := false, false
	for _, t := range r.From {
		found := meta.FindStatusCondition(getter.GetConditions(), t) != nil
		present, missing = present || found, missing || !found
	}
	if !present {
		return nil
	}
	c, err := conditions.NewSummaryCondition(getter, r.Condition,
		conditions.ForConditionTypes(r.From), conditions.IgnoreTypesIfMissing(r.From),
		conditions.CustomMergeStrategy{MergeStrategy: firstNotTrue{trueReason: r.TrueReason, reasons: r.Reasons}})
	if err != nil {
		return fmt.Errorf("summarising %s of %s: %w", r.Condition, obj.GetName(), err)
	}
	if missing && c.Status == metav1.ConditionTrue {
		return nil // what is not said yet may still be no
	}
	set(*c)
	return nil
}

// conditionList is a kind's conditions as Cluster API's summary reads them.
type conditionList []metav1.Condition

func (l conditionList) GetConditions() []metav1.Condition { return l }

// firstNotTrue merges conditions as metalwire's Ready has always read: True when all are True,
// else the first (in the order given) that is not, so that Ready says the one thing to act on
// next rather than a list.
type firstNotTrue struct {
	trueReason string
	reasons    map[string]string
}

func (f firstNotTrue) Merge(_ conditions.MergeOperation, conds []conditions.ConditionWithOwnerInfo, types []string) (metav1.ConditionStatus, string, string, error) {
	for _, t := range types {
		for _, c := range conds {
			if c.Type != t || c.Status == metav1.ConditionTrue {
				continue
			}
			reason := c.Reason
			if r, ok := f.reasons[t]; ok {
				reason = r
			}
			return metav1.ConditionFalse, reason, c.Message, nil
		}
	}
	return metav1.ConditionTrue, f.trueReason, "", nil
}
