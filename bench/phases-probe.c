/* phases-probe: where an MPI_Iallreduce's time goes on 2 ranks, against a
 * plain point-to-point exchange of the same size.
 *
 *   mpicc -O2 -o phases-probe bench/phases-probe.c
 *   mpirun -np 2 ./phases-probe [COUNT [manual]]
 *
 * 3000 timed calls after 1000 untimed, each after MPI_Barrier: MPI_Iallreduce
 * of COUNT floats (default 2) then MPI_Wait, or with a second argument
 * MPI_Irecv + MPI_Isend to the other rank then MPI_Waitall; first pure,
 * then with a spin as long as this rank's mean pure time between the start
 * and the wait.  Prints per rank the mean and median time of the start call
 * and of the wait, pure and after the spin (us).  genx-bench --iallreduce
 * --phases measures the same split for MPI_Iallreduce alone; this probe adds
 * the exchange without any collective, to tell a collective's cost from
 * the transport's.  Made for bench/results/iallreduce-switch2-delay50us/
 * pt2pt-vs-genx-phases.txt (bench/RESULTS.md, section "MPI_Iallreduce"). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static volatile double sink;
static void spin(double s){double t0=MPI_Wtime(),x=1;while(MPI_Wtime()<t0+s)x=x*1.0000001+1e-9;sink=x;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
#define IT 3000
static double S[IT],W[IT];
int main(int argc,char**argv){
  MPI_Init(&argc,&argv); int rank; MPI_Comm_rank(MPI_COMM_WORLD,&rank);
  int n = argc>1? atoi(argv[1]) : 2; int manual = argc>2; static float s[4096], r[4096]; for(int i=0;i<4096;i++)s[i]=1;
  double comp=0; double out[2][4];
  for(int mode=0;mode<2;mode++){
    double ts=0,tw=0;
    for(int i=0;i<IT+1000;i++){
      MPI_Request q; MPI_Barrier(MPI_COMM_WORLD);
      double t0=MPI_Wtime(); MPI_Request qq[2]; if(manual){MPI_Irecv(r,n,MPI_FLOAT,1-rank,7,MPI_COMM_WORLD,&qq[0]);MPI_Isend(s,n,MPI_FLOAT,1-rank,7,MPI_COMM_WORLD,&qq[1]);} else MPI_Iallreduce(s,r,n,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD,&q);
      double t1=MPI_Wtime(); if(mode) spin(comp); double t2=MPI_Wtime();
      if(manual) MPI_Waitall(2,qq,MPI_STATUSES_IGNORE); else MPI_Wait(&q,MPI_STATUS_IGNORE); double t3=MPI_Wtime();
      if(i>=1000){S[i-1000]=t1-t0;W[i-1000]=t3-t2;ts+=t1-t0;tw+=t3-t2;}
    }
    qsort(S,IT,8,cmp);qsort(W,IT,8,cmp);
    out[mode][0]=ts/IT*1e6; out[mode][1]=tw/IT*1e6; out[mode][2]=S[IT/2]*1e6; out[mode][3]=W[IT/2]*1e6;
    if(!mode) comp=(ts+tw)/IT;
  }
  for(int p=0;p<2;p++){ MPI_Barrier(MPI_COMM_WORLD); if(p==rank) printf("rank %d n=%d mean start/wait pure %.3f/%.3f ov %.3f/%.3f | median pure %.3f/%.3f ov %.3f/%.3f\n",rank,n,out[0][0],out[0][1],out[1][0],out[1][1],out[0][2],out[0][3],out[1][2],out[1][3]); fflush(stdout);}
  MPI_Finalize();}
