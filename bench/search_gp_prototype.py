#!/usr/bin/env python3
"""Prototype of the "gp" search (lib/search/search_gp.cpp) on recorded spaces.

usage: [EXTRA=pow2,align[,pcode]] [ACQ=ts [TSN=300]] [WNORM=1] [TH=..] [LA=0,1,4] [WM=0] [INIT=8] [FAILPEN=0.5] [SEL=loo|loorank]
       [NB=R [NBEVERY=K]] [G=0,0.5,1 [GROUP=name,name]]
       python3 bench/search_gp_prototype.py SEEDS FILE.json.gz...

One config at a time: a random start of INIT configs, then the unmeasured
config of the highest expected improvement under a GP on log time whose
kernel is exp(-theta * codes differing - lambda * squared rank distance),
optionally mixed with a main-effects term (WM); theta, lambda, WM and the
noise picked on a grid by the marginal likelihood (SEL: leave-one-out
instead). NB=R restricts every K-th pick (NBEVERY, default 1) to configs
within R parameters of the best so far. G mixes in an additive kernel over two groups of
parameters, GROUP (default block_size_x,block_size_y) and the rest: the kernel is
(1-g) * joint + g * (group kernel + rest kernel) / 2, g picked from G by the likelihood.
EXTRA's pcode adds each pair of numeric parameters' product as a code. ACQ=ts picks
by Thompson sampling instead, one joint posterior draw over a shortlist of TSN configs.
WNORM=1 weighs each parameter's codes so that the parameter counts one mismatch in all.
Prints, per file, the share of seeds reaching 0.90 of the
optimum by 1% of the space and 0.95 by 2%, and the medians at 0.5/1/2%.
docs/lab/search-models-journal.md ("The gp strategy") lists what each setting
scored.
Needs numpy (the venv of scripts/setup.sh has it).
"""
import gzip, itertools, json, math, os, sys

import numpy as np

E=os.environ
def load(fn):
    j=json.load(gzip.open(fn)); keys=j['tune_params_keys']; tp=j['tune_params']
    keys=[k for k in keys if len(tp[k])>1]
    X=[];t=[]
    for c in j['cache'].values():
        X.append([tp[k].index(c[k]) for k in keys])
        v=c['time']; t.append(v if isinstance(v,(int,float)) and v>0 and np.isfinite(v) else np.inf)
    X=np.array(X); t=np.array(t)
    vals=np.array([[tp[k][X[i,p]] for p,k in enumerate(keys)] for i in range(len(X))])
    cols=[]; extra=E.get('EXTRA','pow2,align')
    numeric=[p for p,k in enumerate(keys) if all(isinstance(u,(int,float)) for u in tp[k]) and len(tp[k])>2]
    for p in numeric:
        v=vals[:,p].astype(int)
        if 'pow2' in extra: cols.append(((v&(v-1))==0).astype(int))
        if 'align' in extra and (v>0).all(): cols.append(np.array([(int(u)&-int(u)).bit_length() for u in v]))
    # pcode: each pair of numeric parameters' product as one more code
    # (threads per block, a block's tile), equal products matching.
    pcodes=[]
    if 'pcode' in extra:
        for a,b in itertools.combinations(numeric,2):
            pcodes.append(np.unique(vals[:,a].astype(float)*vals[:,b].astype(float),return_inverse=True)[1])
    H=np.concatenate([X]+([np.stack(cols,1)] if cols else [])+([np.stack(pcodes,1)] if pcodes else []),1)
    O=np.stack([X[:,p]/(len(tp[keys[p]])-1) for p in numeric],1) if numeric else np.zeros((len(X),0))
    # The parameter each column of H and O codes, so that G's groups take
    # their derived codes with them.
    colp=list(range(X.shape[1]))
    for p in numeric:
        if 'pow2' in extra: colp.append(p)
        if 'align' in extra and (vals[:,p].astype(int)>0).all(): colp.append(p)
    colp+=[-1]*len(pcodes)  # a product belongs to neither group
    group=set(E.get('GROUP','block_size_x,block_size_y').split(','))
    in_a=np.array([k in group for k in keys])
    # WNORM=1: a parameter's codes share one unit of mismatch between them
    # (its value, and its derived power-of-two codes), so a parameter of
    # many values does not count three times a boolean's.
    global W
    W=np.ones(H.shape[1])
    if E.get('WNORM')=='1':
        live=np.array([len(np.unique(H[:,c]))>1 for c in range(H.shape[1])])
        for c in range(H.shape[1]):
            same=[d for d in range(H.shape[1]) if colp[d]==colp[c] and live[d]] if colp[c]>=0 else [c]
            W[c]=1/len(same) if live[c] else 0
    gh=np.array([c>=0 and in_a[c] for c in colp],bool); go=in_a[np.array(numeric,dtype=int)] if numeric else np.zeros(0,bool)
    return H,O,X,t,(gh,go)
def erf(z): return np.vectorize(math.erf)(z)
TH=[float(x) for x in E.get('TH','0.05,0.1,0.2,0.3,0.5,1.0').split(',')]
LA=[float(x) for x in E.get('LA','0').split(',')]
WM=[float(x) for x in E.get('WM','0').split(',')]
NZ=[1e-3,1e-2,1e-1,0.3]
G=[float(x) for x in E.get('G','0').split(',')]
def distances(Ha,Hb,Oa,Ob,mh=None,mo=None):
    w=W
    if mh is not None: Ha,Hb,Oa,Ob,w=Ha[:,mh],Hb[:,mh],Oa[:,mo],Ob[:,mo],W[mh]
    return ((Ha[:,None,:]!=Hb[None,:,:])*w).sum(2),((Oa[:,None,:]-Ob[None,:,:])**2).sum(2)
def kernel(th,la,g,D,DA,DB):
    k=np.exp(-th*D[0]-la*D[1])
    if g==0: return k
    return (1-g)*k+g*0.5*(np.exp(-th*DA[0]-la*DA[1])+np.exp(-th*DB[0]-la*DB[1]))
def run(H,O,X,t,groups,seed,budget):
    gh,go=groups; split=any(g>0 for g in G)
    rng=np.random.default_rng(seed); N=len(t); best=np.min(t); P=X.shape[1]
    meas=list(rng.choice(N,int(E.get('INIT','8')),replace=False))
    while len(meas)<budget:
        y=np.log(t[meas]); fin=np.isfinite(y)
        ymax=np.max(y[fin]) if fin.any() else 0
        y=np.where(fin,y,ymax+float(E.get('FAILPEN','0.5')))
        yn=(y-y.mean())/(y.std()+1e-9); n=len(meas)
        Hm=H[meas]; Om=O[meas]; Xm=X[meas]
        D=distances(Hm,Hm,Om,Om); Dx=(Xm[:,None,:]==Xm[None,:,:]).sum(2)/P
        DA=distances(Hm,Hm,Om,Om,gh,go) if split else None; DB=distances(Hm,Hm,Om,Om,~gh,~go) if split else None
        bestll=-np.inf
        for th,la,wm,nz,g in itertools.product(TH,LA,WM,NZ,G):
            K=(1-wm)*kernel(th,la,g,D,DA,DB)+wm*Dx+nz*np.eye(n)
            try: L=np.linalg.cholesky(K)
            except np.linalg.LinAlgError: continue
            a=np.linalg.solve(L.T,np.linalg.solve(L,yn))
            if E.get('SEL')=='loo':
                Ki=np.linalg.solve(L.T,np.linalg.solve(L,np.eye(n))); d=np.diag(Ki)
                ll=np.sum(-0.5*np.log(1/d)-0.5*(a/d)**2*d)
            elif E.get('SEL')=='loorank':
                Ki=np.linalg.solve(L.T,np.linalg.solve(L,np.eye(n))); d=np.diag(Ki); mloo=yn-a/d
                r1=np.argsort(np.argsort(mloo)); r2=np.argsort(np.argsort(yn)); ll=np.corrcoef(r1,r2)[0,1]
            else:
                ll=-0.5*yn@a-np.log(np.diag(L)).sum()
            if ll>bestll: bestll=ll; sel=(th,la,wm,L,a,g)
        th,la,wm,L,a,g=sel
        S=distances(H,Hm,O,Om); Sx=(X[:,None,:]==Xm[None,:,:]).sum(2)/P
        SA=distances(H,Hm,O,Om,gh,go) if g else None; SB=distances(H,Hm,O,Om,~gh,~go) if g else None
        Ks=(1-wm)*kernel(th,la,g,S,SA,SB)+wm*Sx; mu=Ks@a; v=np.linalg.solve(L,Ks.T)
        s=np.sqrt(np.maximum(1-(v*v).sum(0),1e-9))
        f=yn.min(); z=(f-mu)/s
        acq=-((f-mu)*0.5*(1+erf(z/math.sqrt(2)))+s*np.exp(-z*z/2)/math.sqrt(2*math.pi))
        acq[meas]=np.inf
        if E.get('ACQ')=='ts':
            # Thompson sampling on a shortlist of TSN configs (half the best
            # by improvement, a quarter by mean, a quarter uniform draws),
            # one joint draw from the posterior, its fastest measured next.
            M=int(E.get('TSN','300')); free=np.where(np.isfinite(acq))[0]
            sl=set(free[np.argsort(acq[free])[:M//2]])|set(free[np.argsort(mu[free])[:M//4]])
            sl|=set(rng.choice(free,min(len(free),M//4),replace=False)); sl=np.array(sorted(sl))
            Q=distances(H[sl],H[sl],O[sl],O[sl])
            QA=distances(H[sl],H[sl],O[sl],O[sl],gh,go) if g else None; QB=distances(H[sl],H[sl],O[sl],O[sl],~gh,~go) if g else None
            Kss=(1-wm)*kernel(th,la,g,Q,QA,QB)+wm*(X[sl][:,None,:]==X[sl][None,:,:]).sum(2)/P
            C=Kss-v[:,sl].T@v[:,sl]+1e-6*np.eye(len(sl))
            try: Lc=np.linalg.cholesky(C)
            except np.linalg.LinAlgError: w,U=np.linalg.eigh(C); Lc=U*np.sqrt(np.maximum(w,0))
            meas.append(int(sl[np.argmin(mu[sl]+Lc@rng.standard_normal(len(sl)))])); continue
        R=int(E.get('NB','0'))
        if R and len(meas)%int(E.get('NBEVERY','1'))==0:
            b=meas[int(np.argmin(y))]; near=((X!=X[b]).sum(1)<=R)&np.isfinite(acq)
            if near.any(): acq=np.where(near,acq,np.inf)
        meas.append(int(np.argmin(acq)))
    return best/np.minimum.accumulate(t[meas])
if __name__=='__main__':
    seeds=int(sys.argv[1]); first=int(E.get('FIRST','1')); out=[]
    for fn in sys.argv[2:]:
        H,O,X,t,groups=load(fn); N=len(t); b05=int(N*0.005); b1=int(N*0.01); b2=int(N*0.02)
        r=[run(H,O,X,t,groups,s,b2+1) for s in range(first,first+seeds)]
        f05=np.array([x[b05-1] for x in r]);f1=np.array([x[b1-1] for x in r]); f2=np.array([x[b2-1] for x in r])
        out.append(f"{fn.split('/')[-1][:16]} r90@1%={np.mean(f1>=0.9):.2f} r95@2%={np.mean(f2>=0.95):.2f} med.5/1/2={np.median(f05):.3f}/{np.median(f1):.3f}/{np.median(f2):.3f}")
    print(' '.join(f'{k}={E[k]}' for k in ('WNORM','ACQ','TSN','G','GROUP','EXTRA','TH','LA','WM','INIT','FAILPEN','SEL','NB','NBEVERY') if k in E),'|',' || '.join(out),flush=True)
