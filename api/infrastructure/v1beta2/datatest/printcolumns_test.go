package datatest

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

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// table asks the API server for what `kubectl get` prints: the columns and the one row of the
// namespace.
func table(g Gomega, resource, ns string) (columns []string, row map[string]any) {
	httpClient, err := rest.HTTPClientFor(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	url := fmt.Sprintf("%s/apis/%s/namespaces/%s/%s", strings.TrimSuffix(env.Config.Host, "/"), infrav1.GroupVersion, ns, resource)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, http.NoBody)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), url+": "+string(body))

	var t metav1.Table
	g.Expect(json.Unmarshal(body, &t)).To(Succeed())
	g.Expect(t.Rows).To(HaveLen(1))
	row = map[string]any{}
	for i, c := range t.ColumnDefinitions {
		columns = append(columns, c.Name)
		row[c.Name] = t.Rows[0].Cells[i]
	}
	return columns, row
}

func TestPrintColumns(t *testing.T) {
	ctx := context.Background()

	t.Run("Metal3Data", func(t *testing.T) {
		g := NewWithT(t)
		d := validData(newNamespace(t))
		g.Expect(env.Client.Create(ctx, d)).To(Succeed())
		d.Status.ErrorMessage = ptrTo("pool public-v4 has no free address")
		g.Expect(env.Client.Status().Update(ctx, d)).To(Succeed())

		columns, row := table(g, "metal3datas", d.Namespace)
		g.Expect(columns).To(Equal([]string{"Name", "Index", "Template", "Claim", "Ready", "Error", "Age"}))
		g.Expect(row).To(HaveKeyWithValue("Index", BeNumerically("==", 3)))
		g.Expect(row).To(HaveKeyWithValue("Template", "tpl"))
		g.Expect(row).To(HaveKeyWithValue("Claim", "machine-a"))
		g.Expect(row).To(HaveKeyWithValue("Ready", false))
		g.Expect(row).To(HaveKeyWithValue("Error", "pool public-v4 has no free address"))
	})

	t.Run("Metal3DataClaim", func(t *testing.T) {
		g := NewWithT(t)
		c := validClaim(newNamespace(t))
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		c.Status.RenderedData = &corev1.ObjectReference{Name: "tpl-0"}
		c.Status.Conditions = []metav1.Condition{{
			Type: infrav1.DataClaimReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.DataClaimDataReadyReason,
			LastTransitionTime: metav1.Now(),
		}}
		g.Expect(env.Client.Status().Update(ctx, c)).To(Succeed())

		columns, row := table(g, "metal3dataclaims", c.Namespace)
		g.Expect(columns).To(Equal([]string{"Name", "Template", "Data", "Ready", "Error", "Age"}))
		g.Expect(row).To(HaveKeyWithValue("Template", "tpl"))
		g.Expect(row).To(HaveKeyWithValue("Data", "tpl-0"))
		g.Expect(row).To(HaveKeyWithValue("Ready", "True"))
	})

	t.Run("Metal3PreprovisioningDataTemplate", func(t *testing.T) {
		g := NewWithT(t)
		p := validPreprovisioningTemplate(newNamespace(t))
		g.Expect(env.Client.Create(ctx, p)).To(Succeed())
		p.Status.Rendered, p.Status.Failed = 23, 1
		g.Expect(env.Client.Status().Update(ctx, p)).To(Succeed())

		columns, row := table(g, "metal3preprovisioningdatatemplates", p.Namespace)
		g.Expect(columns).To(Equal([]string{"Name", "Rendered", "Failed", "Age"}))
		g.Expect(row).To(HaveKeyWithValue("Rendered", BeNumerically("==", 23)))
		g.Expect(row).To(HaveKeyWithValue("Failed", BeNumerically("==", 1)))
	})
}
