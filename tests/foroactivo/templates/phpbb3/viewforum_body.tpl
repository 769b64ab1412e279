<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/prosilver/viewforum_body.tpl (trimmed: no plus menu, search box or moderation) -->
<h1 class="page-title"><a href="{U_VIEW_FORUM}">{FORUM_NAME}</a></h1>
<div class="pagination">
	{PAGINATION}
	<br /><br />
</div>
<div class="topic-actions"><p class="nomargin path"><a class="nav" href="{U_INDEX}"><span>Índice</span></a></p></div>
{TOPICS_LIST_BOX}
<div class="topic-actions">
	<div class="pagination">
		{PAGINATION}<br />
		<a href="#top">Volver arriba</a><br /><br />
	</div>
</div>
