package migrate_test

import "testing"

func TestClusterAPIRules(t *testing.T) {
	runRules(t, []rule{{
		name: "Cluster references become {apiGroup, kind, name}",
		given: `
apiVersion: cluster.x-k8s.io/v1alpha3
kind: Cluster
metadata: {name: c}
spec:
  clusterNetwork: {pods: {cidrBlocks: [192.168.0.0/18]}}
  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4, kind: Metal3Cluster, name: m3c, namespace: other}
  controlPlaneRef: {kind: KubeadmControlPlane, apiVersion: controlplane.cluster.x-k8s.io/v1alpha3, name: cp}
`,
		want: `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: c}
spec:
  clusterNetwork: {pods: {cidrBlocks: [192.168.0.0/18]}}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Cluster, name: m3c}
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: cp}
`,
		changes: []string{
			"Cluster/c: apiVersion: cluster.x-k8s.io/v1alpha3 -> cluster.x-k8s.io/v1beta2",
			"Cluster/c: spec.infrastructureRef: apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4 -> apiGroup: infrastructure.cluster.x-k8s.io",
			"Cluster/c: spec.infrastructureRef.namespace: removed",
			"Cluster/c: spec.controlPlaneRef: apiVersion: controlplane.cluster.x-k8s.io/v1alpha3 -> apiGroup: controlplane.cluster.x-k8s.io",
		},
	}, {
		name: "Machine: clusterName from the label, timeouts in seconds, a numeric version left to the user",
		given: `
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata:
  name: m
  labels: {cluster.x-k8s.io/cluster-name: c}
spec:
  version: 1.16
  nodeDrainTimeout: 5m
  bootstrap: {configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, name: k}}
  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3Machine, name: m}
`,
		want: `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: m
  labels: {cluster.x-k8s.io/cluster-name: c}
spec:
  clusterName: c
  version: 1.16
  deletion: {nodeDrainTimeoutSeconds: 300}
  bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: k}}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Machine, name: m}
`,
		changes: []string{
			"apiVersion:",
			`spec.clusterName: set to "c" from the cluster.x-k8s.io/cluster-name label`,
			"spec.bootstrap.configRef: apiVersion:",
			"spec.infrastructureRef: apiVersion:",
			"spec.nodeDrainTimeout: 5m -> spec.deletion.nodeDrainTimeoutSeconds: 300",
		},
		mustChange: []string{"Machine/m: spec.version: 1.16 is read as a number"},
	}, {
		name: "Machine without label, bootstrap or a full version",
		given: `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: m}
spec:
  version: "v1.30"
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Machine, name: m}
`,
		want: `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: m}
spec:
  version: "v1.30"
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Machine, name: m}
`,
		mustChange: []string{
			"spec.clusterName: required in v1beta2",
			"spec.bootstrap: required",
			`spec.version: "v1.30" is not a full Kubernetes version`,
		},
	}, {
		name: "MachineDeployment: strategy, minReadySeconds and removed fields",
		given: `
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: md}
spec:
  clusterName: c
  minReadySeconds: 10
  revisionHistoryLimit: 3
  selector: {matchLabels: {a: b}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, deletePolicy: Oldest}}
  template:
    metadata: {labels: {a: b}}
    spec:
      version: v1.33.1
      bootstrap: {dataSecretName: s}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: t}
`,
		want: `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md}
spec:
  clusterName: c
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      clusterName: c
      version: v1.33.1
      bootstrap: {dataSecretName: s}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: t}
      minReadySeconds: 10
  deletion: {order: Oldest}
  rollout: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}
`,
		changes: []string{
			"apiVersion:",
			`spec.template.spec.clusterName: set to "c"`,
			"spec.template.spec.infrastructureRef: apiVersion:",
			"spec.minReadySeconds: moved to spec.template.spec.minReadySeconds",
			"spec.revisionHistoryLimit: removed",
			"spec.strategy.rollingUpdate.deletePolicy: moved to spec.deletion.order",
			"spec.strategy: moved to spec.rollout.strategy",
		},
	}, {
		name: "KubeadmControlPlane v1alpha3: infrastructureTemplate, extraArgs, timeouts",
		given: `
kind: KubeadmControlPlane
apiVersion: controlplane.cluster.x-k8s.io/v1alpha3
metadata: {name: cp}
spec:
  version: v1.17.0
  infrastructureTemplate: {kind: Metal3MachineTemplate, apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4, name: t}
  nodeDrainTimeout: 90s
  upgradeAfter: "2020-01-01T00:00:00Z"
  kubeadmConfigSpec:
    clusterConfiguration:
      kubernetesVersion: v1.17.0
      apiServer:
        timeoutForControlPlane: 20m
        extraArgs: {cloud-provider: baremetal, v: 4}
    initConfiguration:
      bootstrapTokens: [{ttl: 1h}]
    joinConfiguration:
      discovery: {timeout: 5m}
      nodeRegistration: {kubeletExtraArgs: {node-labels: a=b}}
    useExperimentalRetryJoin: true
`,
		want: `
kind: KubeadmControlPlane
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
metadata: {name: cp}
spec:
  version: v1.17.0
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: t}
      deletion: {nodeDrainTimeoutSeconds: 90}
  rollout: {after: "2020-01-01T00:00:00Z"}
  kubeadmConfigSpec:
    clusterConfiguration:
      apiServer:
        extraArgs: [{name: cloud-provider, value: baremetal}, {name: v, value: "4"}]
    initConfiguration:
      bootstrapTokens: [{ttlSeconds: 3600}]
      timeouts: {controlPlaneComponentHealthCheckSeconds: 1200}
    joinConfiguration:
      discovery: {}
      nodeRegistration: {kubeletExtraArgs: [{name: node-labels, value: a=b}]}
      timeouts: {tlsBootstrapSeconds: 300}
`,
		changes: []string{
			"apiVersion: controlplane.cluster.x-k8s.io/v1alpha3 -> controlplane.cluster.x-k8s.io/v1beta2",
			"spec.infrastructureTemplate: moved to spec.machineTemplate.spec.infrastructureRef",
			"spec.machineTemplate.spec.infrastructureRef: apiVersion:",
			"spec.machineTemplate.nodeDrainTimeout: 90s -> spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds: 90",
			"spec.upgradeAfter: moved to spec.rollout.after",
			"spec.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs: map -> list of {name, value}",
			"spec.kubeadmConfigSpec.joinConfiguration.nodeRegistration.kubeletExtraArgs: map -> list of {name, value}",
			"spec.kubeadmConfigSpec.clusterConfiguration.kubernetesVersion: removed",
			"spec.kubeadmConfigSpec.clusterConfiguration.apiServer.timeoutForControlPlane: 20m -> spec.kubeadmConfigSpec.initConfiguration.timeouts.controlPlaneComponentHealthCheckSeconds: 1200",
			"spec.kubeadmConfigSpec.joinConfiguration.discovery.timeout: 5m -> spec.kubeadmConfigSpec.joinConfiguration.timeouts.tlsBootstrapSeconds: 300",
			"spec.kubeadmConfigSpec.initConfiguration.bootstrapTokens[0].ttl: 1h -> spec.kubeadmConfigSpec.initConfiguration.bootstrapTokens[0].ttlSeconds: 3600",
			"spec.kubeadmConfigSpec.useExperimentalRetryJoin: removed",
		},
	}, {
		name: "KubeadmConfigTemplate: kubeletExtraArgs inside the template",
		given: `
apiVersion: bootstrap.cluster.x-k8s.io/v1alpha3
kind: KubeadmConfigTemplate
metadata: {name: t}
spec:
  template:
    spec:
      joinConfiguration:
        nodeRegistration:
          kubeletExtraArgs: {node-labels: 'metal3.io/uuid={{ ds.meta_data.uuid }}'}
`,
		want: `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata: {name: t}
spec:
  template:
    spec:
      joinConfiguration:
        nodeRegistration:
          kubeletExtraArgs: [{name: node-labels, value: 'metal3.io/uuid={{ ds.meta_data.uuid }}'}]
`,
		changes: []string{
			"apiVersion:",
			"KubeadmConfigTemplate/t: spec.template.spec.joinConfiguration.nodeRegistration.kubeletExtraArgs: map -> list of {name, value}",
		},
	}, {
		name: "other providers' infrastructure kinds keep their version",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachine
metadata: {name: d}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachine
metadata: {name: d}
`,
	}})
}

func TestClusterTopologyRules(t *testing.T) {
	runRules(t, []rule{{
		name: "topology: class becomes classRef, timeouts move under deletion, health checks are left to the user",
		given: `
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c}
spec:
  topology:
    class: metal3
    version: v1.33.1
    controlPlane: {replicas: 3, nodeDrainTimeout: 1m}
    workers:
      machineDeployments:
      - {class: worker, name: md-0, machineHealthCheck: {enable: true}}
`,
		want: `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: c}
spec:
  topology:
    classRef: {name: metal3}
    version: v1.33.1
    controlPlane: {replicas: 3, deletion: {nodeDrainTimeoutSeconds: 60}}
    workers:
      machineDeployments:
      - {class: worker, name: md-0, machineHealthCheck: {enable: true}}
`,
		changes: []string{
			"apiVersion:",
			"spec.topology.classRef: class: <name> -> classRef: {name}",
			"spec.topology.controlPlane.nodeDrainTimeout: 1m -> spec.topology.controlPlane.deletion.nodeDrainTimeoutSeconds: 60",
		},
		mustChange: []string{"spec.topology.workers.machineDeployments[0].machineHealthCheck: became healthCheck"},
	}})
}
