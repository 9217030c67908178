package osnetconfig

// OnShapeCheck sets what runs each time a list's shape is checked against the whole schema, and
// returns what puts the setting back.
func OnShapeCheck(f func()) (restore func()) {
	was := shapeChecked
	shapeChecked = f
	return func() { shapeChecked = was }
}

// AddressRuleRefs are the schema definitions validateList holds each address property to.
func AddressRuleRefs() map[string]string {
	out := map[string]string{}
	for name, r := range addressRules {
		out[name] = r.ref
	}
	return out
}
