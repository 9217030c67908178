package v1beta2

// Types shared by Metal3Cluster, Metal3Machine and their templates.

// APIEndpoint is where the workload cluster's Kubernetes API server is reached.
// +kubebuilder:validation:XValidation:rule=`has(self.host) && size(self.host) > 0`,message=`must be set: the IP address or DNS name of the workload cluster's API server (a VIP or load balancer), such as host: 192.168.111.249`,fieldPath=`.host`,reason=FieldValueRequired
type APIEndpoint struct {
	// Host is the IP address or DNS name of the API server, without scheme or port.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`size(self) == 0 || isIP(self) || self.lowerAscii().matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message=`must be an IP address or DNS name without scheme or port, such as 192.168.111.249 or api.example.com; put the port in controlPlaneEndpoint.port`
	Host string `json:"host,omitempty"`

	// Port is the API server's port.
	// +optional
	// +kubebuilder:default=6443
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// IsValid says whether the endpoint can be handed to Cluster API: both host and port set.
func (e APIEndpoint) IsValid() bool {
	return e.Host != "" && e.Port != 0
}

// DiskFormatLiveISO is the image format of an ISO that BMO boots instead of writing it to disk;
// it needs no checksum.
const DiskFormatLiveISO = "live-iso"

// Image is the operating system image written to the host's disk (or booted, for live-iso).
//
// When url and checksum are required is decided by Metal3MachineSpec, because a customDeploy
// method makes the image optional.
// +kubebuilder:validation:XValidation:rule=`!has(self.url) || size(self.url) == 0 || isURL(self.url)`,message=`must be an absolute URL such as http://images.example.com/ubuntu.qcow2`,fieldPath=`.url`,reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule=`!has(self.checksum) || !(self.checksum.startsWith('http://') || self.checksum.startsWith('https://')) || isURL(self.checksum)`,message=`a checksum that starts with http:// or https:// must be a valid URL of a checksum file`,fieldPath=`.checksum`,reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule=`!has(self.url) || !self.url.lowerAscii().startsWith('oci://') || !has(self.checksum) || size(self.checksum) == 0`,message=`must be empty for an oci:// image: the registry's digest verifies it; remove checksum, or pin the image by digest (oci://registry/image@sha256:...)`,fieldPath=`.checksum`,reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule=`!has(self.url) || !self.url.lowerAscii().startsWith('oci://') || !has(self.checksumType)`,message=`must be empty for an oci:// image, which has no checksum; remove checksumType`,fieldPath=`.checksumType`,reason=FieldValueForbidden
type Image struct {
	// URL of the image to deploy.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url,omitempty"`

	// Checksum is the image's md5, sha256 or sha512 sum, or the URL of a file holding it.
	// Required unless diskFormat is live-iso or url is oci:// (an OCI image takes none).
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Checksum *string `json:"checksum,omitempty"`

	// ChecksumType is the checksum algorithm. Unset, BMO and Ironic work it out.
	// +optional
	// +kubebuilder:validation:Enum=md5;sha256;sha512
	ChecksumType *string `json:"checksumType,omitempty"`

	// DiskFormat is the image's format. live-iso boots the image as a virtual CD instead of
	// writing it to disk. The JSON name is diskFormat, as CAPM3 v1beta2 spells it (v1beta1 and
	// BareMetalHost's image say format; metalwire migrate renames it).
	// +optional
	// +kubebuilder:validation:Enum=raw;qcow2;vdi;vmdk;live-iso
	DiskFormat *string `json:"diskFormat,omitempty"`
}

// CustomDeploy asks the deploy ramdisk to run a custom deploy step instead of writing an image.
type CustomDeploy struct {
	// Method is the name of the custom deploy step; it is specific to the deploy ramdisk. If
	// you do not run a custom deploy ramdisk, use image instead.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Method string `json:"method"`
}
