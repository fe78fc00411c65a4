package backup_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
)

const benchEntities = 5000

// BenchmarkExport: a backup of a table (/tablekit) against a raw aztables
// listing of the same table (/raw). Reported: entities/s.
func BenchmarkExport(b *testing.B) {
	raw := env.Table(b)
	tbl, err := entity.NewTable[entity.DynamicEntity](raw)
	if err != nil {
		b.Fatal(err)
	}
	ents := make([]entity.DynamicEntity, benchEntities)
	for i := range ents {
		ents[i] = entityN(i)
	}
	if _, err := tbl.BulkWrite(b.Context(), ents, entity.BulkOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Run("tablekit", func(b *testing.B) {
		for b.Loop() {
			if _, err := backup.Export(b.Context(), tbl, io.Discard, backup.ExportOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(benchEntities*b.N)/b.Elapsed().Seconds(), "entities/s")
	})
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			p := raw.NewListEntitiesPager(&aztables.ListEntitiesOptions{})
			n := 0
			for p.More() {
				page, err := p.NextPage(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				n += len(page.Entities)
			}
			if n != benchEntities {
				b.Fatalf("listed %d", n)
			}
		}
		b.ReportMetric(float64(benchEntities*b.N)/b.Elapsed().Seconds(), "entities/s")
	})
}

// BenchmarkImport: Import of a backup (/tablekit) against BulkWrite of the
// same entities already in memory (/bulkwrite). Reported: entities/s.
func BenchmarkImport(b *testing.B) {
	ents := make([]entity.DynamicEntity, benchEntities)
	for i := range ents {
		ents[i] = entityN(i)
	}
	src, err := entity.NewTable[entity.DynamicEntity](env.Table(b))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := src.BulkWrite(b.Context(), ents, entity.BulkOptions{}); err != nil {
		b.Fatal(err)
	}
	var data bytes.Buffer
	if _, err := backup.Export(b.Context(), src, &data, backup.ExportOptions{}); err != nil {
		b.Fatal(err)
	}
	dst, err := entity.NewTable[entity.DynamicEntity](env.Table(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("tablekit", func(b *testing.B) {
		for b.Loop() {
			if _, err := backup.Import(b.Context(), dst, bytes.NewReader(data.Bytes()), backup.ImportOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(benchEntities*b.N)/b.Elapsed().Seconds(), "entities/s")
	})
	b.Run("bulkwrite", func(b *testing.B) {
		for b.Loop() {
			if _, err := dst.BulkWrite(b.Context(), ents, entity.BulkOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(benchEntities*b.N)/b.Elapsed().Seconds(), "entities/s")
	})
}
