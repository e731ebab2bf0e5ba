module renard

go 1.19
