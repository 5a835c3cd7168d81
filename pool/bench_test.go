package pool_test

import (
	"context"
	"testing"

	"github.com/ration-run/ration/pool"
)

func nop(context.Context) error { return nil }

func BenchmarkGo(b *testing.B) {
	p := newPool(b, 4)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Go(ctx, nop); err != nil {
			b.Fatal(err)
		}
	}
	p.Wait()
}

func BenchmarkMap(b *testing.B) {
	p := newPool(b, 4)
	b.ReportAllocs()
	n := 0
	for r := range pool.Map(context.Background(), p, seqN(b.N), func(ctx context.Context, i int) (int, error) { return i, nil }) {
		n += r.Value
	}
}

func BenchmarkMapOrdered(b *testing.B) {
	p := newPool(b, 4)
	b.ReportAllocs()
	n := 0
	for r := range pool.MapOrdered(context.Background(), p, seqN(b.N), func(ctx context.Context, i int) (int, error) { return i, nil }) {
		n += r.Value
	}
}
