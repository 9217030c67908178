package migrate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/yaml"

	infrav1beta1 "github.com/metalwire/metalwire/api/infrastructure/v1beta1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Target API versions of the infrastructure kinds (metalwire migrate --to).
const (
	ToV1beta2 = "v1beta2"
	ToV1beta1 = "v1beta1"
)

// Targets lists the values --to takes.
var Targets = []string{ToV1beta2, ToV1beta1}

// v1beta1Kinds are the kinds CAPM3's v1beta1 has: a new hub (v1beta2) object and a new spoke.
var v1beta1Kinds = map[string]func() (conversion.Hub, conversion.Convertible){
	"Metal3Cluster": func() (conversion.Hub, conversion.Convertible) {
		return &infrav1.Metal3Cluster{}, &infrav1beta1.Metal3Cluster{}
	},
	"Metal3ClusterTemplate": func() (conversion.Hub, conversion.Convertible) {
		return &infrav1.Metal3ClusterTemplate{}, &infrav1beta1.Metal3ClusterTemplate{}
	},
	"Metal3Machine": func() (conversion.Hub, conversion.Convertible) {
		return &infrav1.Metal3Machine{}, &infrav1beta1.Metal3Machine{}
	},
	"Metal3MachineTemplate": func() (conversion.Hub, conversion.Convertible) {
		return &infrav1.Metal3MachineTemplate{}, &infrav1beta1.Metal3MachineTemplate{}
	},
	"Metal3DataTemplate": func() (conversion.Hub, conversion.Convertible) {
		return &infrav1.Metal3DataTemplate{}, &infrav1beta1.Metal3DataTemplate{}
	},
	"Metal3Data": func() (conversion.Hub, conversion.Convertible) {
		return &infrav1.Metal3Data{}, &infrav1beta1.Metal3Data{}
	},
	"Metal3DataClaim": func() (conversion.Hub, conversion.Convertible) {
		return &infrav1.Metal3DataClaim{}, &infrav1beta1.Metal3DataClaim{}
	},
}

// ToVersion migrates as Migrate does, then writes the infrastructure kinds in the target version:
// ToV1beta2 (the default, what metalwire stores) or ToV1beta1 (CAPM3's v1beta1, which metalwire
// serves through conversion, for repositories that must stay readable by CAPM3 v1beta1 tools).
// Cluster API's kinds stay v1beta2 and ipam.metal3.io stays v1alpha1 either way.
func ToVersion(in []byte, to string) (Result, error) {
	switch to {
	case ToV1beta2, "":
		return Migrate(in)
	case ToV1beta1:
	default:
		return Result{}, fmt.Errorf("--to %q: choose %s", to, strings.Join(Targets, " or "))
	}
	res, err := Migrate(in)
	if err != nil {
		return Result{}, err
	}
	for i := range res.Documents {
		toV1beta1(&res.Documents[i])
	}
	return res, nil
}

// toV1beta1 rewrites one migrated document as CAPM3's v1beta1 through the same conversion the
// API server's webhook runs. A field v1beta1 has no place for is a must-change note: written as
// v1beta1 it would be gone (the webhook keeps such fields only in an annotation of objects it
// converted itself, which a manifest in git does not have).
func toV1beta1(d *Document) {
	if d.APIVersion != infrav1.GroupVersion.String() {
		return
	}
	newPair, ok := v1beta1Kinds[d.Kind]
	if !ok {
		d.Warnings = append(d.Warnings, Note{Object: d.Object, Path: "apiVersion",
			Message: fmt.Sprintf("%s has no v1beta1 (CAPM3 never had it): left as %s", d.Kind, d.APIVersion)})
		return
	}
	hub, spoke := newPair()
	if err := yaml.UnmarshalStrict(d.YAML, hub); err != nil {
		d.MustChange = append(d.MustChange, Note{Object: d.Object,
			Message: fmt.Sprintf("cannot be written as v1beta1, left as %s: %v; fix the other notes first", d.APIVersion, err)})
		return
	}
	if err := spoke.ConvertFrom(hub); err != nil {
		d.MustChange = append(d.MustChange, Note{Object: d.Object, Message: fmt.Sprintf("converting to v1beta1: %v", err)})
		return
	}
	dropConversionData(spoke.(client.Object))

	// What v1beta1 lost: convert back, as the API server will when the manifest is applied.
	back, _ := newPair()
	if err := spoke.ConvertTo(back); err != nil {
		d.MustChange = append(d.MustChange, Note{Object: d.Object, Message: fmt.Sprintf("converting v1beta1 back to v1beta2: %v", err)})
		return
	}
	dropConversionData(back.(client.Object))
	for _, p := range lostFields(hub, back) {
		d.MustChange = append(d.MustChange, Note{Object: d.Object, Path: p,
			Message: "CAPM3's v1beta1 has no place for this field, so the v1beta1 manifest leaves it out: keep this object as v1beta2 (migrate --to v1beta2), or do without the field"})
	}

	out, err := manifestYAML(spoke, infrav1beta1.GroupVersion.String(), d.Kind)
	if err != nil {
		d.MustChange = append(d.MustChange, Note{Object: d.Object, Message: fmt.Sprintf("writing v1beta1: %v", err)})
		return
	}
	d.Changes = append(d.Changes, Note{Object: d.Object, Path: "apiVersion",
		Message: d.APIVersion + " -> " + infrav1beta1.GroupVersion.String() + " (CAPM3's v1beta1, served by metalwire through conversion)"})
	d.APIVersion = infrav1beta1.GroupVersion.String()
	d.YAML = out
}

// dropConversionData removes the annotations the conversion keeps its round-trip data in.
func dropConversionData(obj client.Object) {
	a := obj.GetAnnotations()
	delete(a, infrav1beta1.HubDataAnnotation)
	delete(a, infrav1beta1.SpokeDataAnnotation)
	if len(a) == 0 {
		a = nil
	}
	obj.SetAnnotations(a)
}

// manifestYAML writes obj as a manifest: apiVersion and kind set, no status, no empty
// creationTimestamp.
func manifestYAML(obj any, apiVersion, kind string) ([]byte, error) {
	m, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = apiVersion, kind
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return yaml.Marshal(m)
}

func toMap(obj any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// lostFields are the paths (spec and metadata) where after differs from before. A field only
// after has is no loss: v1beta1 shows some v1beta2 settings twice (noCloudProvider beside
// cloudProviderEnabled, as upstream's conversion does) or with their default (nodeReuse: false).
func lostFields(before, after any) []string {
	b, errB := toMap(before)
	a, errA := toMap(after)
	if errB != nil || errA != nil {
		return []string{"(the object could not be compared)"}
	}
	var paths []string
	for _, top := range []string{"metadata", "spec"} {
		diffPaths(top, b[top], a[top], &paths)
	}
	sort.Strings(paths)
	return paths
}

func diffPaths(p string, before, after any, out *[]string) {
	if reflect.DeepEqual(before, after) {
		return
	}
	bm, okB := before.(map[string]any)
	am, okA := after.(map[string]any)
	if !okB || !okA {
		*out = append(*out, p)
		return
	}
	for k, v := range bm {
		diffPaths(p+"."+k, v, am[k], out)
	}
}
