package migrate

import "go.yaml.in/yaml/v3"

// Bootstrap and control plane kubeadm v1beta2 shapes.

// extraArgsAt lists where KubeadmConfigSpec holds `extraArgs`-like maps, which v1beta2 writes
// as lists of {name, value} so one flag can be given twice.
var extraArgsAt = [][]string{
	{"clusterConfiguration", "apiServer", "extraArgs"},
	{"clusterConfiguration", "controllerManager", "extraArgs"},
	{"clusterConfiguration", "scheduler", "extraArgs"},
	{"clusterConfiguration", "etcd", "local", "extraArgs"},
	{"initConfiguration", "nodeRegistration", "kubeletExtraArgs"},
	{"joinConfiguration", "nodeRegistration", "kubeletExtraArgs"},
}

// clusterConfigurationFromCluster were copied from the Cluster by the bootstrap provider
// whatever the user wrote; v1beta2 dropped them.
var clusterConfigurationFromCluster = []string{"networking", "kubernetesVersion", "clusterName", "apiVersion", "kind"}

func (d *document) migrateKubeadmConfigSpec(spec *yaml.Node, p path) {
	if !isMap(spec) {
		return
	}
	for _, keys := range extraArgsAt {
		parent := getPath(spec, keys[:len(keys)-1]...)
		at := p
		for _, k := range keys {
			at = at.field(k)
		}
		d.argsMapToList(parent, keys[len(keys)-1], at)
	}

	cluster := get(spec, "clusterConfiguration")
	for _, key := range clusterConfigurationFromCluster {
		if del(cluster, key) != nil {
			d.changed(p.field("clusterConfiguration").field(key), "removed (v1beta2 takes it from the Cluster)")
		}
	}
	if v := del(get(cluster, "apiServer"), "timeoutForControlPlane"); v != nil {
		d.durationToSeconds(v, p.field("clusterConfiguration.apiServer.timeoutForControlPlane"),
			child(child(spec, "initConfiguration"), "timeouts"), "controlPlaneComponentHealthCheckSeconds",
			p.field("initConfiguration.timeouts.controlPlaneComponentHealthCheckSeconds"))
	}
	if v := del(getPath(spec, "joinConfiguration", "discovery"), "timeout"); v != nil {
		d.durationToSeconds(v, p.field("joinConfiguration.discovery.timeout"),
			child(child(spec, "joinConfiguration"), "timeouts"), "tlsBootstrapSeconds",
			p.field("joinConfiguration.timeouts.tlsBootstrapSeconds"))
	}
	if tokens := getPath(spec, "initConfiguration", "bootstrapTokens"); isSeq(tokens) {
		for i, token := range tokens.Content {
			if v := del(token, "ttl"); v != nil {
				at := p.field("initConfiguration.bootstrapTokens").index(i)
				d.durationToSeconds(v, at.field("ttl"), token, "ttlSeconds", at.field("ttlSeconds"))
			}
		}
	}
	if del(spec, "useExperimentalRetryJoin") != nil {
		d.changed(p.field("useExperimentalRetryJoin"), "removed (kubeadm retries joins itself since v1.31)")
	}
}

// durationToSeconds writes a duration that was removed at from as whole seconds at to.
func (d *document) durationToSeconds(v *yaml.Node, from path, parent *yaml.Node, key string, to path) {
	seconds, ok := durationSeconds(v)
	if !ok {
		d.mustFix(from, "%q is not a duration; write whole seconds in %s", v.Value, to)
		return
	}
	set(parent, key, intNode(seconds))
	d.changed(from, "%s -> %s: %d", v.Value, to, seconds)
}

// argsMapToList rewrites `extraArgs: {cloud-provider: baremetal}` as
// `extraArgs: [{name: cloud-provider, value: baremetal}]`, in the order written.
func (d *document) argsMapToList(parent *yaml.Node, key string, at path) {
	args := get(parent, key)
	if !isMap(args) || isSet(args) {
		return
	}
	list := seqNode()
	for i := 0; i+1 < len(args.Content); i += 2 {
		value := args.Content[i+1]
		if value.Kind == yaml.ScalarNode && value.Tag != "!!str" {
			value.Tag = "!!str" // a flag value is a string even when it reads as a number
			if value.Style == 0 {
				value.Style = yaml.DoubleQuotedStyle
			}
		}
		list.Content = append(list.Content, mapNode(strNode("name"), strNode(args.Content[i].Value), strNode("value"), value))
	}
	set(parent, key, list)
	d.changed(at, "map -> list of {name, value}")
}

func (d *document) migrateKubeadmControlPlane(spec *yaml.Node, p path) {
	if !isMap(spec) {
		return
	}
	template := get(spec, "machineTemplate")
	templatePath := p.field("machineTemplate")
	// v1alpha3 had the infrastructure template beside the spec; v1alpha4 moved it into
	// machineTemplate, and v1beta2 into machineTemplate.spec.
	if ref := del(spec, "infrastructureTemplate"); ref != nil {
		if template == nil {
			template = child(spec, "machineTemplate")
		}
		set(child(template, "spec"), "infrastructureRef", ref)
		d.changed(p.field("infrastructureTemplate"), "moved to %s", templatePath.field("spec.infrastructureRef"))
	}
	if v := del(spec, "nodeDrainTimeout"); v != nil {
		template = child(spec, "machineTemplate")
		set(template, "nodeDrainTimeout", v)
	}
	if isMap(template) {
		if ref := del(template, "infrastructureRef"); ref != nil {
			set(child(template, "spec"), "infrastructureRef", ref)
			d.changed(templatePath.field("infrastructureRef"), "moved to %s", templatePath.field("spec.infrastructureRef"))
		}
		if gates := del(template, "readinessGates"); gates != nil {
			set(child(template, "spec"), "readinessGates", gates)
			d.changed(templatePath.field("readinessGates"), "moved to %s", templatePath.field("spec.readinessGates"))
		}
		d.moveTimeouts(template, templatePath, func() *yaml.Node { return child(template, "spec") }, templatePath.field("spec"))
		d.contractRef(get(template, "spec"), "infrastructureRef", templatePath.field("spec"))
	}
	if get(getPath(spec, "machineTemplate", "spec"), "infrastructureRef") == nil {
		d.mustFix(templatePath.field("spec.infrastructureRef"), "required; reference the control plane's Metal3MachineTemplate with {apiGroup, kind, name}")
	}
	d.checkVersion(spec, p)

	for _, move := range [][2]string{{"upgradeAfter", "after"}, {"rolloutAfter", "after"}, {"rolloutBefore", "before"}, {"rolloutStrategy", "strategy"}} {
		from, to := move[0], move[1]
		if v := del(spec, from); v != nil {
			set(child(spec, "rollout"), to, v)
			d.changed(p.field(from), "moved to %s", p.field("rollout").field(to))
		}
	}
	if get(spec, "remediationStrategy") != nil {
		d.mustFix(p.field("remediationStrategy"), "became spec.remediation with durations in seconds (retryPeriodSeconds, minHealthyPeriodSeconds); rewrite it")
	}
	d.migrateKubeadmConfigSpec(get(spec, "kubeadmConfigSpec"), p.field("kubeadmConfigSpec"))
}
