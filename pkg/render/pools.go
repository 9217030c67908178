package render

import (
	"fmt"

	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// poolSource is one way a template item names a pool: by IPPool name, by a typed reference to
// any IPAM provider's pool, or by an annotation holding an IPPool name (which wins when set).
type poolSource struct {
	name       string
	ref        *infrav1.IPPoolReference
	annotation *infrav1.FromPoolAnnotation
	// apiGroup and kind qualify name (metaData items carry them beside the name).
	apiGroup, kind string
	// field is the path of the item; the source's own key is appended in messages.
	field string
}

func (s poolSource) set() bool { return s.name != "" || s.ref != nil || s.annotation != nil }

// ref returns the identity of the pool the source names.
func (s poolSource) resolve(f *Facts) (PoolRef, error) {
	switch {
	case s.annotation != nil:
		field := s.field + ".fromPoolAnnotation"
		v, err := annotationValue(field, s.annotation.Object, s.annotation.Annotation, f)
		if err != nil {
			return PoolRef{}, err
		}
		if v == "" {
			return PoolRef{}, invalid(field, "annotation %q on the %s is missing or empty; set it to the name of an IPPool", s.annotation.Annotation, s.annotation.Object)
		}
		return NewPoolRef("", "", v), nil
	case s.ref != nil:
		return NewPoolRef(s.ref.APIGroup, s.ref.Kind, s.ref.Name), nil
	default:
		return NewPoolRef(s.apiGroup, s.kind, s.name), nil
	}
}

// address returns the host's address from the pool the source names.
func (s poolSource) address(f *Facts) (PoolAddress, error) {
	ref, err := s.resolve(f)
	if err != nil {
		return PoolAddress{}, err
	}
	a, ok := f.Pools[ref]
	if !ok {
		return PoolAddress{}, &Error{
			Field:  s.field,
			Reason: ReasonWaitingForPool,
			Detail: fmt.Sprintf("waiting for an address from pool %s", ref),
			Pool:   ref,
		}
	}
	return a, nil
}

// Pools lists the pools metaData and networkData take addresses from (either may be nil), in
// template order without repeats, so a controller can claim an address in each before
// rendering. Pools named by annotation are resolved from facts.
func Pools(md *infrav1.MetaData, nd *infrav1.NetworkData, facts *Facts) ([]PoolRef, error) {
	return pools(md, NetworkDataField, nd, facts)
}

// PreprovisioningPools lists the pools a Metal3PreprovisioningDataTemplate's
// preprovisioningNetworkData takes addresses from.
func PreprovisioningPools(nd *infrav1.NetworkData, facts *Facts) ([]PoolRef, error) {
	return pools(nil, PreprovisioningNetworkDataField, nd, facts)
}

func pools(md *infrav1.MetaData, root string, nd *infrav1.NetworkData, facts *Facts) ([]PoolRef, error) {
	var refs []PoolRef
	seen := map[PoolRef]bool{}
	err := forEachPoolSource(md, root, nd, func(s poolSource) error {
		ref, err := s.resolve(facts)
		if err != nil {
			return err
		}
		if !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
		return nil
	})
	return refs, err
}

// forEachPoolSource calls fn with every pool source of the template, in template order.
func forEachPoolSource(md *infrav1.MetaData, root string, nd *infrav1.NetworkData, fn func(poolSource) error) error {
	var sources []poolSource
	if md != nil {
		for _, list := range []struct {
			name  string
			items []infrav1.FromPool
		}{
			{"ipAddressesFromPool", md.IPAddressesFromPool},
			{"prefixesFromPool", md.PrefixesFromPool},
			{"gatewaysFromPool", md.GatewaysFromPool},
			{"dnsServersFromPool", md.DNSServersFromPool},
		} {
			for i, it := range list.items {
				sources = append(sources, metaDataPool(fmt.Sprintf("metaData.%s[%d]", list.name, i), it))
			}
		}
	}
	if nd != nil {
		for _, nw := range templateNetworks(root, ptr.To(ptr.Deref(nd.Networks, infrav1.NetworkDataNetworks{}))) {
			if nw.src != nil {
				sources = append(sources, nw.src.pool)
			}
			sources = append(sources, routePools(nw.routes)...)
		}
		sources = append(sources, dnsPool(root+".services", ptr.Deref(nd.Services, infrav1.NetworkDataService{}).DNSFromIPPool))
	}
	for _, s := range sources {
		if !s.set() {
			continue
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}

func metaDataPool(field string, it infrav1.FromPool) poolSource {
	return poolSource{field: field + ".name", name: it.Name, apiGroup: it.APIGroup, kind: it.Kind}
}

func staticPool(field, name string, ref *infrav1.IPPoolReference, ann *infrav1.FromPoolAnnotation) poolSource {
	return namedPool(field, ".ipAddressFromIPPool", name, ref, ann)
}

func gatewayPool(field string, name *string, ref *infrav1.IPPoolReference, ann *infrav1.FromPoolAnnotation) poolSource {
	return namedPool(field, ".fromIPPool", ptr.Deref(name, ""), ref, ann)
}

// namedPool is a pool the template names at field one of three ways: by name (in the field
// byName), by reference (fromPoolRef) or through an annotation (the field itself).
func namedPool(field, byName, name string, ref *infrav1.IPPoolReference, ann *infrav1.FromPoolAnnotation) poolSource {
	s := poolSource{field: field + byName, name: name, ref: ref, annotation: ann}
	switch {
	case ann != nil:
		s.field = field
	case ref != nil:
		s.field = field + ".fromPoolRef"
	}
	return s
}

func dnsPool(field string, name *string) poolSource {
	s := poolSource{field: field + ".dnsFromIPPool"}
	if name != nil {
		s.name = *name
	}
	return s
}

// routePools are the pools a network's routes take their gateway and DNS servers from.
func routePools(routes []route) []poolSource {
	out := make([]poolSource, 0, 2*len(routes))
	for _, rt := range routes {
		out = append(out, rt.gwPool, dnsPool(rt.field+".services", rt.dnsPool))
	}
	return out
}

// annotationValue reads an annotation of the Machine, Metal3Machine or host; absent is "".
func annotationValue(field, object, key string, f *Facts) (string, error) {
	o, err := objectFor(field, object, f)
	if err != nil {
		return "", err
	}
	return o.Annotations[key], nil
}

// objectFor returns the object a template item reads, or an error naming the field when the
// caller has no such object (before provisioning) or the kind is unknown.
func objectFor(field, object string, f *Facts) (*Object, error) {
	switch object {
	case infrav1.ObjectMachine, infrav1.ObjectMetal3Machine, infrav1.ObjectBareMetalHost:
	default:
		return nil, invalid(field, "unknown object %q; use machine, metal3machine or baremetalhost", object)
	}
	o := f.object(object)
	if o == nil {
		return nil, &Error{
			Field:  field,
			Reason: ReasonObjectUnavailable,
			Detail: fmt.Sprintf("object %s is not available before provisioning; use baremetalhost", object),
			Object: object,
		}
	}
	return o, nil
}
