package cli

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rudder-operator/rudder/internal/shard"
)

func newShardOfCommand(e *env) *cobra.Command {
	var shards int
	cmd := &cobra.Command{
		Use:   "shard-of --shards M NAMESPACE...",
		Short: "Show the shard that owns each namespace, and how many each shard gets",
		Long: `Show which of M shards (the manager's --shard) owns each namespace, then how many namespaces
each shard gets: a plan to check before deploying shards. It needs no cluster.`,
		Example: e.examples(`  # How team-01, team-02 and team-03 split among 3 shards
  rudder shard-of --shards 3 team-01 team-02 team-03`),
		RunE: func(_ *cobra.Command, args []string) error {
			if shards < 2 {
				return errors.New("flag --shards: set it to the number of shards, 2 or more, such as --shards 3")
			}
			if len(args) == 0 {
				return fmt.Errorf("name the namespaces, such as: %s shard-of --shards %d team-a team-b", e.name, shards)
			}
			return printShards(e.io.Out, shards, args)
		},
	}
	cmd.Flags().IntVar(&shards, "shards", 0, "the number of shards, 2 or more")
	return cmd
}

// printShards prints the shard of shards that owns each namespace, then how
// many each shard got.
func printShards(out io.Writer, shards int, namespaces []string) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	p := &printer{w: w}
	p.printf("NAMESPACE\tSHARD\n")
	counts := make([]int, shards)
	for _, ns := range namespaces {
		s := shard.Of(ns, shards)
		counts[s.Index]++
		p.printf("%s\t%d\n", ns, s.Index)
	}
	for i, n := range counts {
		p.printf("# shard %d\t%d namespace(s)\n", i, n)
	}
	if p.err != nil {
		return p.err
	}
	return w.Flush()
}
