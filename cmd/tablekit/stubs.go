package main

func runQuery(c *cli, args []string) int  { return 0 }
func runStats(c *cli, args []string) int  { return 0 }
func runDelete(c *cli, args []string) int { return 0 }
func runQueue(c *cli, args []string) int  { return 0 }
func runTables(c *cli, args []string) int { return 0 }
func runPlan(c *cli, args []string) int   { return 0 }
