package v1beta1

import (
	"cmp"
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// ConvertTo converts this Metal3Data to the hub (v1beta2).
func (in *Metal3Data) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.Metal3Data)
	src := in.DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	restored := &infrav1.Metal3Data{}
	ok, err := restoreHub(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec = infrav1.Metal3DataSpec{
		Index:       intToHub(src.Spec.Index),
		MetaData:    src.Spec.MetaData,
		NetworkData: src.Spec.NetworkData,
		Claim:       src.Spec.Claim,
		Template:    src.Spec.Template,
	}
	dst.Status = infrav1.Metal3DataStatus{Ready: src.Status.Ready, ErrorMessage: src.Status.ErrorMessage}
	if ok {
		// v1beta1 has neither conditions nor lastUpdated here.
		dst.Status.Conditions = restored.Status.Conditions
		dst.Status.LastUpdated = restored.Status.LastUpdated
	}
	only := &Metal3Data{Spec: Metal3DataSpec{TemplateReference: src.Spec.TemplateReference}}
	return saveSpokeData(only, src.Spec.TemplateReference == "", dst)
}

// ConvertFrom converts the hub (v1beta2) to this Metal3Data.
func (in *Metal3Data) ConvertFrom(srcRaw conversion.Hub) error {
	dst := in
	src := srcRaw.(*infrav1.Metal3Data).DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	only := &Metal3Data{}
	if err := takeSpokeData(dst, only); err != nil {
		return err
	}
	dst.Spec = Metal3DataSpec{
		Index:             intFromHub(src.Spec.Index),
		TemplateReference: only.Spec.TemplateReference,
		MetaData:          src.Spec.MetaData,
		NetworkData:       src.Spec.NetworkData,
		Claim:             src.Spec.Claim,
		Template:          src.Spec.Template,
	}
	dst.Status = Metal3DataStatus{Ready: src.Status.Ready, ErrorMessage: src.Status.ErrorMessage}
	return saveHub(src, dst)
}

// ConvertTo converts this Metal3DataClaim to the hub (v1beta2).
func (in *Metal3DataClaim) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.Metal3DataClaim)
	src := in.DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	restored := &infrav1.Metal3DataClaim{}
	ok, err := restoreHub(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec = infrav1.Metal3DataClaimSpec{Template: src.Spec.Template}
	dst.Status = infrav1.Metal3DataClaimStatus{RenderedData: src.Status.RenderedData, ErrorMessage: src.Status.ErrorMessage}
	if ok {
		dst.Status.Conditions = restored.Status.Conditions
	}
	return nil
}

// ConvertFrom converts the hub (v1beta2) to this Metal3DataClaim.
func (in *Metal3DataClaim) ConvertFrom(srcRaw conversion.Hub) error {
	dst := in
	src := srcRaw.(*infrav1.Metal3DataClaim).DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec = Metal3DataClaimSpec{Template: src.Spec.Template}
	dst.Status = Metal3DataClaimStatus{RenderedData: src.Status.RenderedData, ErrorMessage: src.Status.ErrorMessage}
	return saveHub(src, dst)
}

// ConvertTo converts this Metal3DataTemplate to the hub (v1beta2).
func (in *Metal3DataTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.Metal3DataTemplate)
	src := in.DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	restored := &infrav1.Metal3DataTemplate{}
	ok, err := restoreHub(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec = infrav1.Metal3DataTemplateSpec{
		ClusterName: src.Spec.ClusterName,
		MetaData:    metaDataToHub(src.Spec.MetaData),
		NetworkData: networkDataToHub(src.Spec.NetworkData),
	}
	dst.Status = infrav1.Metal3DataTemplateStatus{LastUpdated: src.Status.LastUpdated, Indexes: indexesToHub(src.Status.Indexes)}
	if ok {
		// metaData and networkData carry v1beta2-only fields (bridges, addresses without a
		// pool, ...): keep v1beta2's when v1beta1 shows them unchanged.
		if same(src.Spec.MetaData, metaDataFromHub(restored.Spec.MetaData)) {
			dst.Spec.MetaData = restored.Spec.MetaData
		}
		if same(src.Spec.NetworkData, networkDataFromHub(restored.Spec.NetworkData)) {
			dst.Spec.NetworkData = restored.Spec.NetworkData
		}
		if same(src.Status.Indexes, indexesFromHub(restored.Status.Indexes)) {
			dst.Status.Indexes = restored.Status.Indexes
		}
		dst.Status.Conditions = restored.Status.Conditions
		// metalwire's os-net-config template has no v1beta1 form.
		dst.Spec.OSNetConfig = restored.Spec.OSNetConfig
	}
	only := &Metal3DataTemplate{Spec: Metal3DataTemplateSpec{
		TemplateReference: src.Spec.TemplateReference,
		MetaData:          writtenMetaData(src.Spec.MetaData),
		NetworkData:       writtenNetworkData(src.Spec.NetworkData),
	}}
	if ok && sameJSON(src.Spec.MetaData, metaDataFromHub(restored.Spec.MetaData)) {
		only.Spec.MetaData = nil // what v1beta2 holds shows as written: nothing to keep
	}
	if ok && sameJSON(src.Spec.NetworkData, networkDataFromHub(restored.Spec.NetworkData)) {
		only.Spec.NetworkData = nil
	}
	return saveSpokeData(only, only.Spec.TemplateReference == "" && only.Spec.MetaData == nil && only.Spec.NetworkData == nil, dst)
}

// ConvertFrom converts the hub (v1beta2) to this Metal3DataTemplate.
func (in *Metal3DataTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	dst := in
	src := srcRaw.(*infrav1.Metal3DataTemplate).DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	only := &Metal3DataTemplate{}
	if err := takeSpokeData(dst, only); err != nil {
		return err
	}
	dst.Spec = Metal3DataTemplateSpec{
		ClusterName:       src.Spec.ClusterName,
		TemplateReference: only.Spec.TemplateReference,
		MetaData:          keptMetaData(src.Spec.MetaData, only.Spec.MetaData),
		NetworkData:       keptNetworkData(src.Spec.NetworkData, only.Spec.NetworkData),
	}
	dst.Status = Metal3DataTemplateStatus{LastUpdated: src.Status.LastUpdated, Indexes: indexesFromHub(src.Status.Indexes)}
	if len(src.Status.Indexes) > 0 && slices.Equal(indexesToHub(dst.Status.Indexes), src.Status.Indexes) {
		// v1beta1's map gives the list back as it is: no copy in the annotation, whose size the
		// API server limits to 256 KiB (a site's template lists every machine's claim).
		src.Status.Indexes = nil
	}
	return saveHub(src, dst)
}

// indexesToHub turns v1beta1's claim -> index map into v1beta2's list, ordered by index.
func indexesToHub(in map[string]int) []infrav1.IndexEntry {
	if in == nil {
		return nil
	}
	out := make([]infrav1.IndexEntry, 0, len(in))
	for _, name := range slices.Sorted(maps.Keys(in)) {
		out = append(out, infrav1.IndexEntry{Name: name, Index: int32(in[name])}) //nolint:gosec // an index is far below 2^31
	}
	slices.SortStableFunc(out, func(a, b infrav1.IndexEntry) int { return cmp.Compare(a.Index, b.Index) })
	return out
}

func indexesFromHub(in []infrav1.IndexEntry) map[string]int {
	if in == nil {
		return nil
	}
	out := make(map[string]int, len(in))
	for _, e := range in {
		out[e.Name] = int(e.Index)
	}
	return out
}
