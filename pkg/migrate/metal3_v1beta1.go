package migrate

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// The mechanical part of CAPM3's infrastructure.cluster.x-k8s.io v1beta1 -> v1beta2 move:
// fields that were renamed or reshaped, and the one that went away. Each rule only fires when
// the old shape is there, so v1beta2 manifests pass through unchanged.

// metaDataPoolRenames are the metaData lists CAPM3 v1beta2 renamed from *FromIPPool to
// *FromPool (they may name any IPAM provider's pool since v1beta1 grew apiGroup and kind).
var metaDataPoolRenames = [][2]string{
	{"ipAddressesFromIPPool", "ipAddressesFromPool"},
	{"prefixesFromIPPool", "prefixesFromPool"},
	{"gatewaysFromIPPool", "gatewaysFromPool"},
	{"dnsServersFromIPPool", "dnsServersFromPool"},
}

func (d *document) renameMetaDataPoolLists(meta *yaml.Node, p path) {
	if !isMap(meta) {
		return
	}
	for _, r := range metaDataPoolRenames {
		from, to := r[0], r[1]
		if get(meta, from) == nil {
			continue
		}
		if get(meta, to) != nil {
			d.mustFix(p.field(from), "both %s (v1beta1) and %s (v1beta2) are set; move the items of %s into %s", from, to, from, to)
			continue
		}
		rename(meta, from, to)
		d.changed(p.field(from), "-> %s (renamed in v1beta2)", to)
	}
}

// renameImageFormat: CAPM3 v1beta1 (like BareMetalHost) calls the image format `format`;
// v1beta2 calls it `diskFormat`, and the API server refuses `format` as unknown.
func (d *document) renameImageFormat(image *yaml.Node, p path) {
	format := get(image, "format")
	if format == nil {
		return
	}
	if existing := get(image, "diskFormat"); existing != nil {
		if isScalar(existing) && isScalar(format) && existing.Value == format.Value {
			del(image, "format")
			d.changed(p.field("format"), "removed (diskFormat already says %s)", existing.Value)
			return
		}
		d.mustFix(p.field("format"), "contradicts diskFormat: %s; keep diskFormat (the v1beta2 name) and remove format", existing.Value)
		return
	}
	rename(image, "format", "diskFormat")
	d.changed(p.field("format"), "-> diskFormat (renamed in v1beta2)")
}

// dropTemplateReference removes CAPM3 v1beta1's templateReference (Metal3DataTemplate and
// Metal3Data). It let a new template take over the indexes of the Metal3Data of an older one;
// v1beta2 has no such field and metalwire keeps indexes per template, so there is nothing
// for the user to carry over: a changed template is a new template, and machines rolled onto
// it get new indexes.
func (d *document) dropTemplateReference(spec *yaml.Node) {
	v := del(spec, "templateReference")
	if v == nil {
		return
	}
	d.changed("spec.templateReference", "removed %q: v1beta2 has no such field (CAPM3 dropped it); indexes are not carried over from the template it named", v.Value)
}

// failureDomainsToList turns v1beta1's failure domains, a map keyed by name, into v1beta2's
// list of {name, controlPlane, attributes}, in the order the author wrote them. controlPlane:
// false is left out, as upstream's conversion does (unset means false).
func (d *document) failureDomainsToList(spec *yaml.Node, p path) {
	domains := get(spec, "failureDomains")
	if !isMap(domains) {
		return
	}
	list := seqNode()
	for i := 0; i+1 < len(domains.Content); i += 2 {
		name, body := domains.Content[i], domains.Content[i+1]
		entry := mapNode(strNode("name"), strNode(name.Value))
		if isMap(body) {
			for j := 0; j+1 < len(body.Content); j += 2 {
				key, value := body.Content[j], body.Content[j+1]
				if key.Value == "controlPlane" && isScalar(value) {
					if cp, err := strconv.ParseBool(value.Value); err == nil && !cp {
						continue
					}
				}
				entry.Content = append(entry.Content, key, value)
			}
		}
		list.Content = append(list.Content, entry)
	}
	set(spec, "failureDomains", list)
	d.changed(p.field("failureDomains"), "map keyed by name -> list of {name, controlPlane, attributes} (v1beta2)")
}
