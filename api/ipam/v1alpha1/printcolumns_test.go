package v1alpha1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// kubectl get shows what the API server's Table view returns; these tests read that view.
func TestPrintColumns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	pool := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "pool-", Namespace: namespace},
		Spec:       ipamv1.IPPoolSpec{ClusterName: ptrTo("cluster-1"), NamePrefix: "columns"},
	}
	g.Expect(env.Client.Create(ctx, pool)).To(Succeed())
	pool.Status = ipamv1.IPPoolStatus{Total: ptrTo[int64](10), Used: ptrTo[int64](3), Free: ptrTo[int64](7),
		Conditions: []metav1.Condition{{Type: ipamv1.ReadyCondition, Status: metav1.ConditionTrue,
			Reason: ipamv1.PoolAvailableReason, Message: "7 addresses free", LastTransitionTime: metav1.Now()}}}
	g.Expect(env.Client.Status().Update(ctx, pool)).To(Succeed())

	claim := &ipamv1.IPClaim{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "claim-", Namespace: namespace},
		Spec:       ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: pool.Name}},
	}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	claim.Status = ipamv1.IPClaimStatus{ErrorMessage: ptrTo("Exhausted IP Pools"),
		Conditions: []metav1.Condition{{Type: ipamv1.ReadyCondition, Status: metav1.ConditionFalse,
			Reason: ipamv1.PoolExhaustedReason, Message: "no free address", LastTransitionTime: metav1.Now()}}}
	g.Expect(env.Client.Status().Update(ctx, claim)).To(Succeed())

	address := &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: ipamv1.IPAddressName("columns", "10.0.0.5"), Namespace: namespace},
		Spec: ipamv1.IPAddressSpec{Address: "10.0.0.5", Prefix: 24,
			Pool: corev1.ObjectReference{Name: pool.Name}, Claim: corev1.ObjectReference{Name: claim.Name}},
	}
	g.Expect(env.Client.Create(ctx, address)).To(Succeed())

	cases := []struct {
		resource string
		object   client.Object
		want     map[string]any // a value or a matcher
	}{
		{resource: "ippools", object: pool, want: map[string]any{
			"Cluster": "cluster-1", "Prefix": "columns", "Total": 10.0, "Used": 3.0, "Free": 7.0, "Ready": "True"}},
		{resource: "ipclaims", object: claim, want: map[string]any{
			"Pool": pool.Name, "Address": BeNil(), "Ready": "False", "Error": "Exhausted IP Pools"}},
		{resource: "ipaddresses", object: address, want: map[string]any{
			"Address": "10.0.0.5", "Prefix": 24.0, "Pool": pool.Name, "Claim": claim.Name}},
	}
	for _, tc := range cases {
		t.Run(tc.resource, func(t *testing.T) {
			g := NewWithT(t)
			row := tableRow(t, tc.resource, tc.object.GetName())
			g.Expect(row).To(HaveKey("Age"))
			for column, value := range tc.want {
				g.Expect(row).To(HaveKeyWithValue(column, value), "column %s", column)
			}
		})
	}
}

// tableRow fetches one object as kubectl does and returns its printed cells by column name.
func tableRow(t *testing.T, resource, name string) map[string]any {
	t.Helper()
	g := NewWithT(t)
	httpClient, err := rest.HTTPClientFor(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	url := fmt.Sprintf("%s/apis/ipam.metal3.io/v1alpha1/namespaces/%s/%s/%s", strings.TrimSuffix(env.Config.Host, "/"), namespace, resource, name)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, http.NoBody)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
	resp, err := httpClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), url+" "+string(body))

	table := metav1.Table{}
	g.Expect(json.Unmarshal(body, &table)).To(Succeed())
	g.Expect(table.Rows).To(HaveLen(1))
	row := map[string]any{}
	for i, column := range table.ColumnDefinitions {
		row[column.Name] = table.Rows[0].Cells[i]
	}
	return row
}
